import type { Tool } from "../../tools";
import type { DMailBox } from "../dmail";
import { createRememberTool, createSkillTool, type RememberStore, type SkillLoader } from "./remember";
import { createProposePlanTool, type PlanModeState } from "./propose-plan";
import { createSendDmailTool } from "./send-dmail";
import { createTaskTool, type SubagentRunner } from "./task";
import { createTodoTool, type TodoStore } from "./todo";

export { TodoItem, type TodoStore } from "./todo";
export type { SubagentRunner } from "./task";
export type { RememberStore, SkillLoader } from "./remember";
export type { PlanModeState } from "./propose-plan";

/** The tools that need the loop's internals; each is left out when its part is not given. */
export function createAgentTools(env: {
  todos?: TodoStore;
  dmail?: DMailBox;
  subagent?: { run: SubagentRunner; toolNames: readonly string[] };
  /** `remember` (server/memory) and `skill` (server/skills). */
  remember?: RememberStore;
  skills?: SkillLoader;
  /** `propose_plan`: how plan mode ends (server/agent/plan-mode.ts). */
  plan?: PlanModeState;
}): Tool[] {
  const tools: Tool[] = [];
  if (env.todos) tools.push(createTodoTool(env.todos));
  if (env.subagent) tools.push(createTaskTool(env.subagent.run, env.subagent.toolNames));
  if (env.dmail) tools.push(createSendDmailTool(env.dmail));
  if (env.remember) tools.push(createRememberTool(env.remember));
  if (env.skills) tools.push(createSkillTool(env.skills));
  if (env.plan) tools.push(createProposePlanTool(env.plan));
  return tools;
}
