import type { AgentRuntime } from "../agent";
import type { ApprovalService } from "../approvals";
import type { CheckpointService } from "../checkpoints";
import type { BridgeConfig } from "../config";
import type { WorkspaceHosts } from "../host";
import type { EventLog, SessionJanitor, Sessions } from "../sessions";
import type { PtyManager } from "../pty";
import type { SettingsService } from "../settings";
import type { ShareLinks } from "../sharing";
import type { SessionMcp } from "../tools";
import type { MemoryService } from "../memory";
import type { SkillCatalog } from "../skills";
import type { HookService } from "../hooks";
import type { DiagnosticsService } from "../diagnostics";
import type { AuditedCommand } from "../store";
import type { TerminalRouter, TurnRouter } from "../team";
import type { RunnerHub } from "../runners";
import type { Routines } from "../routines";
import type { AuthPolicy } from "./auth";
import type { OidcSignIn, People } from "../people";
import type { Worktrees } from "../worktrees";
import type { Board } from "../board";
import type { Notifier } from "../notify";
import type { BrowserSessions, Previews } from "../preview";

/** What the transport layer needs from the rest of the bridge. */
export interface BridgeServices {
  config: BridgeConfig;
  version: string;
  auth: AuthPolicy;
  log: EventLog;
  sessions: Sessions;
  /** Frees what a session holds in this process (runtime, checkpoints, agents, MCP, terminals, tasks). */
  janitor: SessionJanitor;
  /** External ACP agent processes, one per session that has an agentCommand (tests count them). */
  externalAgents?: { readonly size: number };
  runtime: AgentRuntime;
  approvals: ApprovalService;
  /** The host of a session's workspace, this machine's or its runner's, and their watchers' changes (server/host). */
  hosts: WorkspaceHosts;
  settings: SettingsService;
  ptys: PtyManager;
  /** Prompts, steering and cancel, forwarded to the bridge running the session's turn (server/team). */
  turns: TurnRouter;
  /** Terminals of this bridge and, in team mode, of the others (server/team). */
  terminals: TerminalRouter;
  checkpoints: CheckpointService;
  shares: ShareLinks;
  /** Named people on a hub (server/people); without any, single-token mode stands. */
  people: People;
  /** OpenID Connect sign-in; null when WORLDLINE_OIDC_* is not set. */
  oidc: OidcSignIn | null;
  /** MCP servers per session (GET /api/v1/sessions/:id/mcp); absent in bridges without MCP. */
  mcp?: SessionMcp;
  /** Memories (GET|POST|DELETE /api/v1/memory); absent in bridges without memory. */
  memory?: MemoryService;
  /** Lifecycle hooks (GET /api/v1/sessions/:id/hooks, POST /api/v1/hooks/trust); absent in bridges without them. */
  hooks?: HookService;
  /** Language-server diagnostics (GET /api/v1/diagnostics, GET /api/v1/sessions/:id/diagnostics). */
  diagnostics?: DiagnosticsService;
  /** SKILL.md folders (GET /api/v1/skills). */
  skills?: SkillCatalog;
  /** The redacted shell-command audit log (GET /api/v1/audit/commands). */
  audit?: { list(options: { limit?: number; sessionId?: string }): Promise<AuditedCommand[]> };
  /** Runners that dial this hub (GET /api/v1/runners, sessions with a `runner`). */
  runners?: RunnerHub;
  /** Saved prompts on a schedule or fired by their token (GET|POST /api/v1/routines). */
  routines?: Routines;
  /** Worktree sessions: create, commit, merge, push, archive, restore (server/worktrees). */
  worktrees?: Worktrees;
  /** The board's live cards (server/board). */
  board?: Board;
  /** Web Push and the notify webhook (server/notify): devices, focused tabs, action tokens. */
  push?: Notifier;
  /** Previews of sessions' dev servers and their ports (server/preview); absent in bridges without them. */
  previews?: Previews;
  /** The bridge's Chromium (the browser tool, the Preview panel's element captures). */
  browsers?: BrowserSessions;
}
