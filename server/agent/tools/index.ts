import type { Tool } from "../../tools";
import type { DMailBox } from "../dmail";
import { createSendDmailTool } from "./send-dmail";
import { createTaskTool, type SubagentRunner } from "./task";
import { createTodoTool, type TodoStore } from "./todo";

export { TodoItem, type TodoStore } from "./todo";
export type { SubagentRunner } from "./task";

/** The tools that need the loop's internals; each is left out when its part is not given. */
export function createAgentTools(env: {
  todos?: TodoStore;
  dmail?: DMailBox;
  subagent?: { run: SubagentRunner; toolNames: readonly string[] };
}): Tool[] {
  const tools: Tool[] = [];
  if (env.todos) tools.push(createTodoTool(env.todos));
  if (env.subagent) tools.push(createTaskTool(env.subagent.run, env.subagent.toolNames));
  if (env.dmail) tools.push(createSendDmailTool(env.dmail));
  return tools;
}
