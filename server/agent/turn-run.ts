import type { ModelPrice } from "../protocol";
import type { ToolContext } from "../tools/types";
import type { CheckpointPort } from "./checkpoint-port";
import type { Context, HistoryRecord } from "./context";
import type { DMailBox } from "./dmail";
import type { TurnHooks } from "./hooks-port";
import type { ChatProvider } from "./provider";
import type { RetryPolicy } from "./retry";
import type { BudgetRaise, RunState, RunStateRecorder } from "./run-state";
import type { AgentTool, ApprovalGate } from "./tools-port";
import type { TurnEmitter } from "./turn-emitter";

/**
 * Everything one turn runs with, built once per turn (server/agent/turn-execution.ts, or a
 * subagent from its parent's) and passed down as it is: the loop, its steps, the tool runner,
 * checkpoints and compaction each read the part they need (`Pick<TurnRun, …>`).
 */
export interface TurnRun {
  sessionId: string;
  workspace: string;
  /** The turn's number in the session, for checkpoint rows. */
  turnNumber?: number;

  // What the model is sent.
  prompt: string;
  /** Image URLs (`data:` URLs from ACP clients) sent with the prompt as content parts. */
  images?: string[];
  /** Thumbnails for the transcript's `message.user` event, by index of `images` (see server/protocol/images.ts). */
  imagePreviews?: (string | undefined)[];
  systemPrompt: string;
  /** The turn's `<context>` block (server/agent/turn-context.ts), appended to its user message for the model. */
  userContext?: { text: string; records: HistoryRecord[] };
  /** Per-turn context for the model only (e.g. plan mode's reminder), sent after the prompt; the transcript shows the prompt alone. */
  modelNote?: string;
  context: Context;
  tools: AgentTool[];
  /** "none": the model answers without tools, which stay in the request so its prefix does not change. */
  toolChoice?: "none";

  // The model and its limits.
  provider: ChatProvider;
  model: string;
  reasoning?: "on" | "off";
  retry: RetryPolicy;
  maxSteps: number;
  contextWindow: number;
  /** Share of the window above which the context is compacted before a step; omitted = never. */
  compactionThreshold?: number;
  /** Checked before each step (server/budgets): "stop" ends the turn with `stop_reason: "budget"`. */
  budget?: {
    beforeStep(spent: { usd: number | null; tokens: number }): Promise<"go" | "stop">;
    /** Raises a budget as a person allowed (a budget request decided after a restart). */
    raise(raise: BudgetRaise): Promise<void>;
  };
  /** The model's price, for the turn's `cost_usd` (server/agent/pricing.ts). */
  price?: ModelPrice;

  // How the turn reaches the rest of the bridge.
  gate: ApprovalGate;
  emit: TurnEmitter;
  signal: AbortSignal;
  /** Adds what other modules give tools (audit, password prompts, a runner's host) to the loop's context. */
  decorateToolContext?: (ctx: ToolContext) => ToolContext;
  /** The turn's lifecycle hooks (server/hooks); absent when the workspace has none that run. Subagents run without. */
  hooks?: TurnHooks;
  /** Omitted for subagents: their steps are not checkpoints of the session. */
  checkpoints?: CheckpointPort;
  /** Present when `send_dmail` is enabled; checkpoint markers are shown to the model only then. */
  dmail?: DMailBox;
  /** Messages the user sent while the turn runs; injected before the next step. */
  takeSteering?: () => string[];
  /**
   * Called once a step's model request is on its way (or as the step ends): for writes the
   * first token need not wait for (the runtime's `running` status row).
   */
  onRequestSent?: () => void;
  /** Keeps the loop's state while the turn waits on a person (server/agent/run-state.ts). */
  runState?: RunStateRecorder;
  /** The state this turn resumes from: it was waiting when its bridge stopped, and was taken over. */
  resume?: RunState;
}
