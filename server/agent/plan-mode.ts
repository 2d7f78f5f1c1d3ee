import { classifyCommand } from "../tools/shell/classify";
import type { EventLog } from "../sessions";
import type { ToolResult } from "../tools/types";
import type { AgentTool, ApprovalGate } from "./tools-port";

/**
 * Plan mode: the agent reads, searches and runs read-only commands, then presents a plan
 * (`propose_plan`). Everything else is refused before it reaches the approval gate, with a
 * result that tells the model to finish the plan instead of retrying.
 *
 * The check wraps each tool of the turn and asks the turn's TurnPlanMode at every call, so
 * switching plan mode on mid-turn stops writes from the next call on.
 */

/** Tools that only read, search or talk to the user. MCP and anything unknown are refused (effects unknown). */
const PLAN_MODE_TOOLS = new Set([
  "read_file",
  "list_dir",
  "glob",
  "grep",
  "fetch_url",
  "todo",
  "task",
  "task_output",
  "skill",
  "remember",
  "send_dmail",
  "propose_plan",
]);

/** Shell lines the classifier rates as these (and nothing riskier in the line) run in plan mode. */
const READ_ONLY_ACTIONS = new Set(["read_only", "git_read"]);

/** Sent to the model with each prompt in plan mode (the system prompt stays fixed for caching). */
export const PLAN_MODE_NOTE = [
  "<system-reminder>",
  "Plan mode is on. Do not change anything yet: only read files, search, and run read-only shell commands.",
  "When you know what to do, call propose_plan with the plan in Markdown and stop; the user approves it or asks for changes.",
  "</system-reminder>",
].join("\n");

export type PlanVerdict = { allowed: true } | { allowed: false; reason: string };

/** Whether a call may run in plan mode, and if not, the message the model gets. */
export async function planModeVerdict(tool: string, args: unknown): Promise<PlanVerdict> {
  if (tool === "shell") {
    const command = typeof args === "object" && args !== null ? (args as { command?: unknown }).command : undefined;
    if (typeof command !== "string") return { allowed: true }; // the tool itself refuses malformed input
    const { actionType } = await classifyCommand(command);
    if (READ_ONLY_ACTIONS.has(actionType) && !(args as { background?: unknown }).background) return { allowed: true };
    return {
      allowed: false,
      reason: refusal(`this command is rated "${actionType}"; only read-only commands run while planning`),
    };
  }
  if (PLAN_MODE_TOOLS.has(tool)) return { allowed: true };
  return { allowed: false, reason: refusal(`"${tool}" changes things or has effects plan mode cannot check`) };
}

function refusal(why: string): string {
  return [
    `Refused: plan mode is on and ${why}.`,
    "Do not try to make changes now. Finish your plan and present it with the propose_plan tool;",
    "the user will approve it (plan mode then ends and you can carry it out) or ask you to keep planning.",
  ].join(" ");
}

/**
 * The session's plan mode as a turn carries it: read with the session when the turn starts, then
 * kept current by the session's `session.updated` events (the mode menu, ACP's setMode, an approved
 * plan), so a switch mid-turn applies from the next tool call on without a database read per call.
 */
export class TurnPlanMode {
  private on: boolean;
  private readonly unsubscribe: () => void;

  constructor(log: Pick<EventLog, "subscribe">, sessionId: string, initial: boolean) {
    this.on = initial;
    this.unsubscribe = log.subscribe(sessionId, (event) => {
      if (event.type === "session.updated" && event.payload.mode) this.on = event.payload.mode === "plan";
    });
  }

  active(): boolean {
    return this.on;
  }

  /** The turn ended: stop following the session's events. */
  close(): void {
    this.unsubscribe();
  }
}

/** Wraps the turn's tools so calls plan mode refuses never reach the gate or run. */
export function gateToolsForPlanMode(tools: readonly AgentTool[], active: () => boolean): AgentTool[] {
  return tools.map((tool) => {
    const verdictFor = async (rawArgs: string): Promise<PlanVerdict> => {
      if (!active()) return { allowed: true };
      return planModeVerdict(tool.name, parseLoose(rawArgs));
    };
    return {
      ...tool,
      needsApproval: async (rawArgs, ctx) => {
        const verdict = await verdictFor(rawArgs);
        if (verdict.allowed) return tool.needsApproval(rawArgs, ctx);
        // Refused anyway: nobody should be asked to approve it.
        return {
          level: "none",
          subject: tool.name,
          scope: tool.name,
          description: "Refused in plan mode",
          risk: "none",
        };
      },
      run: async (rawArgs, ctx): Promise<ToolResult> => {
        const verdict = await verdictFor(rawArgs);
        if (!verdict.allowed) return { output: verdict.reason, isError: true, display: { planModeRefused: true } };
        return tool.run(rawArgs, ctx);
      },
    };
  });
}

/**
 * For a session backed by an external ACP agent: its permission requests (edits, commands it
 * considers risky) are refused while plan mode is on, without asking anyone; the agent is told why.
 */
export function planModeGate(gate: ApprovalGate, active: () => boolean): ApprovalGate {
  return {
    ...gate,
    check: async (request) => {
      if (!active()) return gate.check(request);
      return { approved: false, feedback: refusal(`"${request.tool}" needs approval, which plan mode never gives`) };
    },
  };
}

function parseLoose(raw: string): unknown {
  try {
    return raw ? JSON.parse(raw) : {};
  } catch {
    // unparseable arguments: the tool's validation reports them
    return {};
  }
}
