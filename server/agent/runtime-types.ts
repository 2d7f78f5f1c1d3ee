import type { ModelPrice } from "../protocol";
import type { BridgeConfig } from "../config";
import type { EventLog, Sessions } from "../sessions";
import type * as store from "../store";
import type { ToolContext } from "../tools/types";
import type { CheckpointPort } from "./checkpoint-port";
import type { HookPort } from "./hooks-port";
import type { TurnResult } from "./loop";
import type { MemoryPort, SkillsPort } from "./memory-port";
import type { ChatProvider } from "./provider";
import type { RetryPolicy } from "./retry";
import type { SessionToolSource } from "./session-tools";
import type { AgentTool, ApprovalGate } from "./tools-port";
import type { TitlePort } from "./title-port";
import type { PromptOptions } from "./turn-queue";

export type { PromptOptions };
import type { TurnEmitter } from "./turn-emitter";
import type { WorkspaceHost, WorkspaceHosts } from "../host";

/** What the runtime is built from and what its callers pass and get back (server/agent/runtime.ts). */

export interface RuntimeDeps {
  /** The Settings page's default model, used when the environment names none (server/settings). */
  defaultModel?: () => Promise<{
    baseURL?: string;
    apiKey: string;
    apiVersion?: string;
    model: string;
    contextWindow: number;
    capabilities?: { images: boolean };
  } | null>;
  db: store.Db;
  /** The user's prices per model id (Settings); the built-in defaults fill in the rest (server/agent/pricing.ts). */
  prices?: () => Promise<Record<string, ModelPrice>>;
  log: EventLog;
  sessions: Sessions;
  config: BridgeConfig;
  /** This process's lease (server/leases): turns it runs carry it, so other processes leave them alone. */
  ownerId?: string;
  /**
   * Claims of sessions (server/leases): a turn runs under the session's claim and its writes are
   * fenced on the claim's epoch. Without it (tests, one process) turns run unfenced.
   */
  claims?: ClaimPort;
  /** Workspace tools (built-ins, MCP); the runtime adds the agent's own (todo, task, send_dmail). */
  tools: () => AgentTool[];
  gate: ApprovalGate;
  /** Tests and print mode may inject a provider; otherwise built from the model config. */
  provider?: ChatProvider;
  retry?: RetryPolicy;
  maxSteps?: number;
  /** Workspace snapshots (server/checkpoints); without it checkpoints are bare rows. */
  checkpoints?: CheckpointPort;
  /** Share of the context window that triggers compaction (default 0.85). */
  compactionThreshold?: number;
  /** Skill summaries for the system prompt and full text on use (server/skills). */
  skills?: SkillsPort;
  /** Recall into the system prompt, the `remember` tool, the post-turn decision and reflection (server/memory). */
  memory?: MemoryPort;
  /** Adds audit and password prompts to every tool's context (server/tools, server/approvals). */
  decorateToolContext?: (ctx: ToolContext) => ToolContext;
  /** Runs turns of sessions backed by an external ACP agent command (server/acp). */
  externalAgents?: ExternalAgentPort;
  /** Lifecycle hooks of the session's workspace and WORLDLINE_HOME (server/hooks). */
  hooks?: HookPort;
  /** Names a session after its first prompt (server/titles). */
  titles?: TitlePort;
  /** Tools that depend on the session's workspace (MCP servers, server/tools/mcp); layered over `tools`. */
  sessionTools?: SessionToolSource;
  /**
   * Where a session's workspace is (server/host WorkspaceHosts): this machine's host or its runner's.
   * A turn's host carries its claim: a runner refuses requests of a bridge whose claim was taken over.
   */
  hosts: Pick<WorkspaceHosts, "of">;
  /** Resolves when the session may start a turn: a new worktree's setup has finished (server/worktrees). */
  ready?: (sessionId: string, signal: AbortSignal) => Promise<void>;
}

/** The session claim a turn runs under (server/store/claims.ts): taken, released, and checked for fencing. */
export interface ClaimPort {
  claim(sessionId: string): Promise<store.Claim>;
  release(claim: store.Claim): Promise<void>;
  holds(claim: store.Claim): Promise<boolean>;
  /** Registers a claim taken over with a waiting turn (server/agent/take-over.ts), to be released like one claimed. */
  adopted(claim: store.Claim): void;
}

/** A turn of a session whose agent is an external command (Session.agentCommand): server/acp drives it. */
export interface ExternalAgentPort {
  runTurn(input: {
    sessionId: string;
    workspace: string;
    /** Where the workspace is: the session's runner; this machine when absent. */
    host?: WorkspaceHost;
    command: string;
    turnId: string;
    prompt: string;
    emit: TurnEmitter;
    signal: AbortSignal;
    gate: ApprovalGate;
    /** The price of the model the agent names (Settings, then the defaults), for the turn's cost. */
    price: (model: string | undefined) => ModelPrice | undefined;
  }): Promise<TurnResult>;
}

export interface StartedTurn {
  turnId: string;
  done: Promise<TurnResult>;
  /** True when another turn was running: this one starts after it (and any queued before it). */
  queued: boolean;
}
