import { AgentRuntime, type RuntimeDeps } from "../agent";
import { Board } from "../board";
import { CheckpointService } from "../checkpoints";
import type { BridgeConfig } from "../config";
import { DiagnosticsService } from "../diagnostics";
import { ExternalAgents } from "../external-agents";
import { HookService } from "../hooks";
import { localHost } from "../host";
import { SessionClaims } from "../leases";
import { MemoryService } from "../memory";
import { People } from "../people";
// Not the folder's index: that loads the preview proxy (http-proxy-3), which print mode never serves.
import { BrowserSessions } from "../preview/browsers";
import { installProcessErrorPolicy } from "../process-errors";
import { activeProcessRecords, setProcessRecords } from "../processes";
import { PtyManager } from "../pty";
import { Routines, type RoutineSessions } from "../routines";
import { addSecretNames, holdSecretValues, sealSecretEnvironment } from "../secrets";
import { SessionJanitor, type Sessions } from "../sessions";
import { SettingsService } from "../settings";
import { ShareLinks } from "../sharing";
import { SkillCatalog } from "../skills";
import * as store from "../store";
import { relayCredentials, Rpc, TerminalRouter, TurnRouter } from "../team";
import { SessionTitles } from "../titles";
import { builtinTools, SessionMcp, sharedTaskRegistry } from "../tools";
import { Worktrees } from "../worktrees";
import { openCore, type Core } from "./core";
import type { BridgeOptions } from "./options";

/**
 * What terminals, shell tools, MCP servers and external agents never get (SECURITY.md, "What a
 * terminal reaches"): the configured names are scrubbed too, the configuration's secrets are
 * redacted by value, and (sealing) this process's own environment no longer holds any of them.
 */
function protectSecrets(config: BridgeConfig, seal: boolean): void {
  addSecretNames(config.scrubEnv);
  holdSecretValues(
    [config.token, config.model?.apiKey, config.databaseUrl, config.redisUrl, config.oidc?.clientSecret]
      .concat(config.tokens.map((named) => named.token))
      .filter((value): value is string => typeof value === "string" && value !== "not-needed"),
  );
  if (!seal) return;
  const { removed, clean } = sealSecretEnvironment();
  if (removed.length > 0 && !clean)
    process.stderr.write(
      `[worldline] WARNING: could not clear ${removed.join(", ")} from this process's start-up environment (/proc/${process.pid}/environ); a terminal of this user may read them there. Start the bridge without them in its environment (see SECURITY.md).\n`,
    );
}

/**
 * What every bridge starts with, served over HTTP or not (server/main.ts, headless.ts): this
 * process's error policy, its secrets kept from what it runs, and the domain parts.
 */
export async function openParts(options: BridgeOptions): Promise<Parts> {
  installProcessErrorPolicy();
  protectSecrets(options.config, options.sealEnvironment === true);
  return startParts(options);
}

/** The domain services, from the database up to the team routers. */
async function startParts(options: BridgeOptions) {
  const { config } = options;
  const core = await openCore(config, options);
  const { db, log, sessions, lease, redis, runners, files, hosts } = core;
  const ptys = createPtys(core);
  const settings = new SettingsService(db, config.home, config.model?.model ?? null);
  // A session's snapshots are taken through its host (in process here, on its runner for a runner session);
  // not fenced: a stale bridge's snapshot changes no file, and its checkpoint row is fenced in the store.
  const checkpoints = new CheckpointService({ db, log, sessions, home: config.home, hosts });
  // Sessions with an agentCommand run an external ACP agent, Worldline being its client.
  const externalAgents = new ExternalAgents();
  // MCP servers of each session's workspace (and of ACP clients), started on a session's first turn.
  const mcp = new SessionMcp({
    home: config.home,
    notice: (sessionId, level, text) => log.append(sessionId, { type: "notice", payload: { level, text } }),
  });
  const memory = new MemoryService(db);
  const skills = new SkillCatalog(config.home, hosts.local);
  const titles = new SessionTitles(sessions);
  // Worktree sessions (server/worktrees) reach the runtime and the turn router, both made below.
  let late: { runtime: AgentRuntime; turns: TurnRouter } | undefined;
  const worktrees = new Worktrees({
    db,
    hosts,
    sessions,
    log,
    terminals: ptys,
    complete: async (model, system, user, signal) =>
      late ? late.runtime.completeFor(model, system, user, signal, "commit_message") : null,
    prompt: async (sessionId, text) => {
      if (!late) throw new Error("the bridge is still starting");
      return { taskId: (await late.turns.prompt(sessionId, text)).turnId };
    },
  });
  const board = new Board({ db, sessions, log });
  // The agent's Chromium (the `browser` tool), launched on first use; a context per session.
  const browsers = new BrowserSessions();
  // Lifecycle hooks of each session's workspace and of WORLDLINE_HOME, run on the session's host.
  const hooks = new HookService({ db, home: config.home, append: (id, event) => log.append(id, event) });
  // Language servers for the errors an edit leaves (one per workspace and language, started on first use).
  const diagnostics = new DiagnosticsService();
  const runtime = createRuntime(core, options, {
    diagnostics,
    checkpoints,
    settings,
    externalAgents,
    mcp,
    memory,
    skills,
    titles,
    ready: (sessionId, signal) => worktrees.ready(sessionId, signal),
    browsers,
    hooks,
  });
  checkpoints.attach(runtime);
  // A bridge serving the UI takes over turns left waiting by one that stopped (a restart, a dead
  // peer); `worldline acp` and `run` leave them waiting for one.
  if ((options.kind ?? "web") === "web") {
    core.waiting.keep = (live) => runtime.takeOverWaiting(live);
    await core.sweep();
  }
  // What a session holds in this process, freed on delete and after it idles unwatched.
  const janitor = new SessionJanitor({
    resources: [
      { name: "agent runtime state", forget: (id, why) => runtime.forgetSession(id, why) },
      { name: "checkpoint bookkeeping", forget: (id) => checkpoints.forgetSession(id) },
      { name: "external agent process", forget: (id, why) => externalAgents.forgetSession(id, why) },
      { name: "MCP servers", forget: (id) => mcp.forgetSession(id) },
      { name: "hooks (SessionEnd)", forget: (id, why) => hooks.forgetSession(id, why) },
      { name: "language servers", forget: (id) => diagnostics.forgetSession(id) },
      // Terminals and background tasks are the person's: only a delete ends them.
      { name: "terminals", forget: (id, why) => why === "deleted" && ptys.closeSession(id) },
      { name: "background tasks", forget: (id, why) => why === "deleted" && sharedTaskRegistry.stopSession(id) },
      { name: "browser context", forget: (id) => browsers.closeSession(id) },
    ],
    idleSessions: (idleMs) => runtime.idleSessions(idleMs),
    watched: (id) => log.watched(id),
  });
  janitor.start();
  // Another process (worldline acp/run) wrote to a session: its model context is re-read next turn.
  log.onForeign((sessionId) => runtime.forgetContext(sessionId));

  // Team mode: work for a session whose turn or terminal is on another bridge goes there (server/team).
  const rpc = redis ? new Rpc(redis, lease.id) : null;
  await rpc?.start();
  if (redis && rpc) await runners.joinTeam({ rpc, link: redis, lease });
  const turns = new TurnRouter({ db, runtime, log, lease, rpc });
  const terminals = new TerminalRouter({ ptys, lease, link: redis, rpc });
  await terminals.start();
  late = { runtime, turns };
  // Who may connect: people and share links, with one signal when a credential ends (server/people/credentials.ts),
  // heard by every bridge of a team (server/team/credentials.ts).
  const people = new People(db, { oidc: config.oidc !== null, oidcDefaultRole: config.oidcDefaultRole });
  const shares = new ShareLinks(db);
  shares.onRevoked((linkId) => people.credentials.ended({ kind: "share", linkId }));
  if (redis) await relayCredentials(redis, people.credentials);
  // Scheduling starts with the HTTP half (server/main.ts, serveParts), never in print mode: it runs
  // one turn and exits, and a schedule it fired would die with it.
  const routines = new Routines({ db, sessions: routineSessions(db, { sessions, worktrees, turns }) });
  const domain = {
    files,
    ptys,
    settings,
    checkpoints,
    externalAgents,
    mcp,
    memory,
    skills,
    titles,
    hooks,
    diagnostics,
    runtime,
    janitor,
    browsers,
  };
  return { ...core, ...domain, worktrees, board, rpc, turns, terminals, people, shares, routines };
}

/**
 * A routine's run: a new session on its folder, in a fresh worktree unless the routine says not
 * (its owner's, with its budget and mode), then its prompt.
 */
function routineSessions(
  db: store.Db,
  { sessions, worktrees, turns }: { sessions: Sessions; worktrees: Worktrees; turns: TurnRouter },
): RoutineSessions {
  return {
    async create(input) {
      const { workspace, title } = input;
      const runner = input.runner ?? undefined;
      const model = input.model ?? undefined;
      const session =
        input.isolation === "worktree"
          ? await worktrees.create({ workspace, title, runner, model, isolation: "worktree" })
          : await sessions.create({ workspace, title, runner, model });
      if (input.mode === "plan" || input.budgetUsd !== null) {
        await sessions.update(session.id, { mode: input.mode, budget_usd: input.budgetUsd });
      }
      if (input.ownerId) await store.putSessionAccess(db, session.id, input.ownerId, "owner");
      return session.id;
    },
    async prompt(sessionId, text) {
      await turns.prompt(sessionId, text);
    },
  };
}

export type Parts = Awaited<ReturnType<typeof startParts>>;

/** Ends the work in hand: no new turns, then every running part closed, the storage last (closeStorage). */
export async function stopParts(parts: Parts): Promise<void> {
  parts.janitor.stop();
  parts.routines.stop();
  parts.board.close();
  parts.worktrees.close();
  // A runner that is away would hold each stop below for its grace (30 s).
  parts.runners.stopping();
  await parts.runtime.cancelAll();
  // Snapshots and rows of the last checkpoints may still be being written.
  await parts.checkpoints.settledAll();
  await sharedTaskRegistry.stopAll();
  await parts.externalAgents.closeAll();
  await parts.mcp.close();
  await parts.diagnostics.close();
  await parts.titles.close();
  await parts.ptys.closeAll();
  await parts.browsers.close();
  await parts.runners.close();
  parts.files.close();
}

/** After stopParts and whatever still reads the log (the push notifier): the lease, the log, the bus and the database. */
export async function closeStorage(parts: Parts): Promise<void> {
  // After the shutdown settled this process's turns, before the log's last writes.
  await parts.lease.stop();
  await parts.log.close();
  parts.rpc?.close();
  await parts.redis?.close();
  await parts.db.$disconnect();
  if (activeProcessRecords() === parts.processRecords) setProcessRecords(undefined);
}

function createPtys({ log, sessions, hosts }: Core): PtyManager {
  return new PtyManager({
    // A session's shells open through its host: node-pty here, or on its runner (server/runners/remote-pty.ts).
    terminalsOf: async (sessionId) => {
      const session = await sessions.get(sessionId);
      return { cwd: session.workspace.path, open: hosts.of(session.runner).openPty };
    },
    // A terminal can outlive its session's log (the session was deleted): its events then have nowhere to go.
    events: {
      opened: (t) =>
        log.isOpen(t.sessionId) &&
        log.append(t.sessionId, { type: "terminal.opened", payload: { terminalId: t.terminalId, title: t.title } }),
      renamed: (t) =>
        log.isOpen(t.sessionId) &&
        log.append(t.sessionId, { type: "terminal.renamed", payload: { terminalId: t.terminalId, title: t.title } }),
      closed: (t, exitCode) =>
        log.isOpen(t.sessionId) &&
        log.append(t.sessionId, { type: "terminal.closed", payload: { terminalId: t.terminalId, exitCode } }),
    },
  });
}

/** The agent runtime with everything a turn reaches, and the lease beats that keep its turns honest. */
function createRuntime(
  core: Core,
  options: BridgeOptions,
  parts: Pick<RuntimeDeps, "externalAgents" | "memory" | "skills" | "titles" | "ready" | "hooks"> & {
    diagnostics: DiagnosticsService;
    checkpoints: CheckpointService;
    settings: SettingsService;
    mcp: SessionMcp;
    browsers: BrowserSessions;
  },
): AgentRuntime {
  const { config, db, log, sessions, lease, approvals, hosts } = core;
  const { settings, mcp } = parts;
  const runtime = new AgentRuntime({
    db,
    log,
    sessions,
    config,
    ownerId: lease.id,
    claims: new SessionClaims(db, lease),
    checkpoints: parts.checkpoints,
    // Built once: the tools keep no per-turn state, and building them (shell's schema) every turn cost the first token ~0.3 ms.
    tools:
      options.tools ??
      (
        (tools) => () =>
          tools
      )(builtinTools({ browser: parts.browsers })),
    gate: approvals.gate,
    provider: options.provider,
    // The environment's Azure API version serves a Settings provider at an Azure endpoint too.
    defaultModel: async () => {
      const model = await settings.resolveDefaultModel();
      return model && { ...model, apiVersion: config.apiVersion };
    },
    prices: () => settings.prices(),
    retry: options.retry,
    externalAgents: parts.externalAgents,
    sessionTools: mcp.toolSource(),
    memory: parts.memory,
    skills: parts.skills,
    titles: parts.titles,
    ready: parts.ready,
    hooks: parts.hooks,
    hosts,
    // Every shell command the tools run is written, redacted, to the audit log.
    decorateToolContext: (ctx) => ({
      ...ctx,
      // Edits end with the language server's errors in the file (server/diagnostics), on the session's host.
      diagnose: (file, text) =>
        parts.diagnostics.afterEdit(
          // The server is the workspace's, shared by its sessions and their turns: its host carries no turn's
          // claim (a later turn's claim would make a runner refuse the first turn's writes to it). It only reads.
          {
            sessionId: ctx.sessionId,
            workspace: ctx.cwd,
            host: ctx.host?.runner ? hosts.of(ctx.host.runner) : (ctx.host ?? localHost),
          },
          file,
          text,
        ),
      audit: (record) => store.recordCommand(db, { ...record, sessionId: ctx.sessionId, turnId: ctx.turnId }),
    }),
    ...options.agent,
  });
  // A turn whose claim was taken while this bridge was cut off stops; ended turns' unstored statuses are retried.
  lease.onBeat(async () => {
    await runtime.stopFencedTurns();
    await runtime.retryUnsettled();
  });
  return runtime;
}
