import type { ToolHost } from "../host";
import type { TurnEmitter } from "./turn-emitter";

/** The lifecycle events the loop tells hooks about (server/hooks runs them). */
export type HookEvent =
  "SessionStart" | "UserPromptSubmit" | "PreToolUse" | "PostToolUse" | "Stop" | "SessionEnd" | "Notification";

/** What the event tells a hook beyond the session, workspace and event name (Claude Code's field names). */
export interface HookEventFields {
  tool_name?: string;
  tool_input?: unknown;
  tool_response?: unknown;
  prompt?: string;
  message?: string;
  source?: string;
  reason?: string;
  /** Stop: a Stop hook already sent this turn back to work (so a hook can let it end). */
  stop_hook_active?: boolean;
  /** Notification: what waits (`permission_prompt`, `elicitation_dialog`, `idle_prompt`); matchers match it. */
  notification_type?: string;
  /** The tool call the hook ran for: its transcript line sits with the call. */
  toolCallId?: string;
}

/** What the hooks of one event answered, together. */
export interface HookVerdict {
  /** A hook blocked (exit 2 or `"decision": "block"`): the reason the model sees. */
  block?: string;
  /** A PreToolUse hook approved (`"decision": "approve"`): the hook, for `decidedBy`. */
  approve?: string;
  /** `additionalContext` (UserPromptSubmit, SessionStart): for the model, after the prompt. */
  context: string[];
  /** PostToolUse: what the hooks said about the result (their reason or stderr on exit 2), for the model. */
  feedback: string[];
}

/** The hooks of one turn, bound to its session, workspace, host and transcript. */
export interface TurnHooks {
  run(event: HookEvent, fields?: HookEventFields): Promise<HookVerdict>;
}

/** Where turns get their hooks (server/hooks implements it). */
export interface HookPort {
  forTurn(input: {
    sessionId: string;
    workspace: string;
    host: ToolHost;
    emit: TurnEmitter;
    signal: AbortSignal;
  }): Promise<TurnHooks | undefined>;
}
