import fs from "node:fs";
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { errorMessage } from "./errors";
import { installProcessErrorPolicy } from "./process-errors";
import {
  AgentRuntime,
  resumableTurnIds,
  type AgentTool,
  type ChatProvider,
  type RetryPolicy,
  type RuntimeDeps,
} from "./agent";
import { readWorkspacePrompt } from "./agent/system-prompt";
import { connectRedis } from "./bus";
import { ExternalAgents } from "./external-agents";
import { MemoryService } from "./memory";
import { listSkills, SkillCatalog } from "./skills";
import { HookService } from "./hooks";
import { DiagnosticsService } from "./diagnostics";
import { SessionTitles } from "./titles";
import { ApprovalService } from "./approvals";
import { CheckpointService, LocalShadowRepos } from "./checkpoints";
import { isLoopbackHost, ProtectedHome, ROOT_DIR, type BridgeConfig } from "./config";
import { ProcessRecords, activeProcessRecords, setProcessRecords } from "./processes";
import { EventLog, resolveWorkspacePath, SessionJanitor, Sessions, WorkspacePlacement } from "./sessions";
import { OwnerLease, SessionClaims, sweepOrphans, type LeaseOptions } from "./leases";
import { localPtyOpener, PtyManager } from "./pty";
import { BrowserSessions, Previews, servePreviewsFirst } from "./preview";
import { RunnerHub } from "./runners";
import { Routines, type RoutineSessions } from "./routines";
import { relayCredentials, Rpc, TerminalRouter, TurnRouter } from "./team";
import { WorkspaceFiles } from "./files";
import { LocalWorkspaceHost, WorkspaceHosts, localHost } from "./host";
import { SettingsService } from "./settings";
import { Worktrees } from "./worktrees";
import { Board } from "./board";
import { ShareLinks } from "./sharing";
import { mayDrive, OidcSignIn, People } from "./people";
import { loadVapidKeys, Notifier, type NotifierOptions } from "./notify";
import * as store from "./store";
import { RUNNER_SOCKET_PATH } from "./protocol";
import { addSecretNames, holdSecretValues, sealSecretEnvironment } from "./secrets";
import { builtinTools, SessionMcp, sharedTaskRegistry } from "./tools";
import {
  attachSocketServer,
  createAuthPolicy,
  createRequestHandler,
  createToken,
  type BridgeServices,
} from "./transport";

export const VERSION: string = JSON.parse(fs.readFileSync(path.join(ROOT_DIR, "package.json"), "utf8")).version;

export { ROOT_DIR };

export interface BridgeOptions {
  config: BridgeConfig;
  /** Serve the Next.js pages (off for API-only tests and `worldline acp`). */
  ui?: boolean;
  dev?: boolean;
  provider?: ChatProvider;
  retry?: RetryPolicy;
  /** What kind of process this is, for its lease row: web (default), acp or run. */
  kind?: "web" | "acp" | "run";
  /** Lease timings; tests shorten them (server/leases). */
  lease?: Pick<LeaseOptions, "ttlMs" | "heartbeatMs">;
  /** The agent's tools; tests inject their own. */
  tools?: () => AgentTool[];
  /** Push timings (server/notify); tests shorten them. */
  push?: Pick<NotifierOptions, "timeoutMs" | "retryDelaysMs">;
  /** Loop limits and the agent's own tools (todo, task, send_dmail); see RuntimeDeps. */
  agent?: Pick<RuntimeDeps, "maxSteps" | "compactionThreshold">;
  /**
   * Drop the secrets from this process's environment once started (server/secrets/environment.ts):
   * set by the commands that run a bridge as their process (`worldline serve`, `run`, `acp`), not by
   * tests that start one inside the test runner.
   */
  sealEnvironment?: boolean;
}

export interface Bridge {
  url: string;
  port: number;
  token: string;
  services: BridgeServices;
  server: HttpServer;
  close(): Promise<void>;
}

/** Starts the bridge: database, domain services, HTTP + socket.io on one port. */
export async function startBridge(options: BridgeOptions): Promise<Bridge> {
  installProcessErrorPolicy();
  const { config } = options;
  protectSecrets(config, options.sealEnvironment === true);
  const parts = await startParts(options);
  const server = createServer();
  const token = config.token ?? createToken();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => resolve());
  });
  // Next.js (~250 ms to load and prepare) loads once the server listens: the ready line, the API,
  // sockets and terminals do not wait for it, and a page asked for sooner waits. Loading it earlier,
  // alongside the start-up, brought the first page no sooner (all of it runs on this one thread).
  const pages = options.ui === false ? null : loadPages(config, options.dev ?? false);
  // The auth policy needs the real port (PORT=0 picks one), so it is built after listen;
  // no request is read before the handler below is attached (no await in between).
  const port = (server.address() as AddressInfo).port;
  const auth = createAuthPolicy({
    token,
    host: config.host,
    port,
    extraHosts: config.extraHosts,
    named: config.tokens,
    team: Boolean(config.redisUrl),
    secure: config.publicUrl?.startsWith("https://") ?? false,
  });
  const previews = createPreviews(parts, auth, port);
  const services = { ...bridgeServices(parts, auth), previews };
  services.push = await startNotifier(parts, services, options.push);
  const notifier = services.push;
  parts.routines.onEnded((run) => notifier.routineRun(run));
  server.on("request", createRequestHandler(services, pages?.handle ?? null));
  const io = attachSocketServer(server, services, { adapter: parts.redis?.adapter });
  parts.runners.attach(server, { hostAllowed: (req) => auth.hostAllowed(req) });
  server.on("upgrade", (req, socket) => {
    // socket.io answers its own paths (the UI's and the runners'); no other upgrade is served.
    if (!req.url?.startsWith("/socket.io/") && !req.url?.startsWith(RUNNER_SOCKET_PATH)) socket.destroy();
  });
  // Preview hosts are the previewed apps', before any of the IDE's listeners (server/preview).
  servePreviewsFirst(server, previews.proxy);

  if (!isLoopbackHost(config.host)) {
    process.stderr.write(
      `[worldline] WARNING: listening on ${config.host}, reachable from your network (WORLDLINE_ALLOW_LAN=1). The token is still required for every request.\n`,
    );
  }
  let closing: Promise<void> | undefined;
  const displayHost = config.host.includes(":") ? `[${config.host}]` : config.host;
  return {
    url: `http://${displayHost}:${port}`,
    port,
    token,
    services,
    server,
    close: () => (closing ??= shutdown(parts, { server, io, pages, push: services.push, previews })),
  };
}

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
 * Web Push and the webhook (server/notify): who may see a session is who gets its notices, a
 * token's owner sees every session, a person what server/people grants them.
 */
async function startNotifier(
  parts: Parts,
  services: BridgeServices,
  timings: BridgeOptions["push"],
): Promise<Notifier> {
  const { config, db, log, sessions } = parts;
  const { people, auth } = services;
  const keys = await loadVapidKeys(config.home, db, Boolean(config.databaseUrl));
  const personOf = (owner: string) => (owner.startsWith("person:") ? owner.slice("person:".length) : null);
  const notifier = new Notifier({
    db,
    log,
    // Push services want a contact (RFC 8292): the hub's https address, else a placeholder address.
    vapid: {
      ...keys,
      subject: config.publicUrl?.startsWith("https:") ? config.publicUrl : "mailto:push@worldline.invalid",
    },
    title: async (sessionId) => (await sessions.get(sessionId).catch(() => null))?.title ?? "Worldline",
    access: async (owner, sessionId) => {
      const personId = personOf(owner);
      if (!personId) return "drive";
      const level = await people.levelOn(personId, sessionId);
      return level ? (mayDrive(level) ? "drive" : "view") : null;
    },
    decider: async (owner) => {
      const personId = personOf(owner);
      if (personId) return (await people.current(personId))?.name ?? "push";
      return auth.decider(owner.slice("token:".length), "push");
    },
    webhook: config.notifyWebhook,
    ...timings,
  });
  notifier.start();
  return notifier;
}

/** What transport serves: the domain parts, plus the auth policy built once the port is known. */
function bridgeServices(parts: Parts, auth: BridgeServices["auth"]): BridgeServices {
  const { config, db } = parts;
  return {
    config,
    version: VERSION,
    auth,
    log: parts.log,
    sessions: parts.sessions,
    runtime: parts.runtime,
    approvals: parts.approvals,
    hosts: parts.hosts,
    settings: parts.settings,
    ptys: parts.ptys,
    turns: parts.turns,
    terminals: parts.terminals,
    checkpoints: parts.checkpoints,
    shares: parts.shares,
    people: parts.people,
    oidc: config.oidc ? new OidcSignIn(config.oidc, auth.secret) : null,
    mcp: parts.mcp,
    memory: parts.memory,
    skills: parts.skills,
    hooks: parts.hooks,
    diagnostics: parts.diagnostics,
    audit: { list: (query) => store.listCommands(db, query) },
    janitor: parts.janitor,
    externalAgents: parts.externalAgents,
    runners: parts.runners,
    routines: parts.routines,
    worktrees: parts.worktrees,
    board: parts.board,
    browsers: parts.browsers,
  };
}

/** Previews of sessions' dev servers on their own origins, and the ports they listen on (server/preview). */
function createPreviews(parts: Parts, auth: BridgeServices["auth"], port: number): Previews {
  const previews = new Previews({
    bridgePort: port,
    ideOrigins: auth.origins,
    secret: auth.secret,
    session: async (id) => {
      const row = await store.getSession(parts.db, id);
      return row ? { runner: row.runner ?? null } : null;
    },
    // A runner session's terminals and commands carry the runner's pids: its runner reads the ports under them.
    sessionRoots: (id) => [
      ...parts.ptys
        .list(id)
        .filter((terminal) => terminal.pid > 0) // a runner terminal still opening has no pid yet
        .map((terminal) => ({ pid: terminal.pid, kind: "terminal" as const })),
      ...sharedTaskRegistry
        .list(id)
        .filter((task) => task.status === "running")
        .filter((task) => task.group.pid > 0)
        .map((task) => ({ pid: task.group.pid, kind: "group" as const })),
    ],
    runners: parts.runners.previews,
  });
  parts.browsers.usePreviews(previews);
  return previews;
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
  const routines = new Routines({ db, sessions: routineSessions(db, { sessions, worktrees, turns }) });
  await routines.start();
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

type Parts = Awaited<ReturnType<typeof startParts>>;

/** Stops accepting work first (no new connections, no more socket commands), then closes each part. */
async function shutdown(
  parts: Parts,
  http: {
    server: HttpServer;
    io: ReturnType<typeof attachSocketServer>;
    pages: ReturnType<typeof loadPages> | null;
    push?: Notifier;
    previews: Previews;
  },
): Promise<void> {
  const { server, io, pages, previews } = http;
  server.close();
  io.disconnectSockets(true);
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
  previews.close();
  await parts.browsers.close();
  await parts.runners.close();
  await new Promise<void>((resolve) => io.close(() => resolve()));
  server.closeAllConnections();
  parts.files.close();
  await http.push?.close();
  // After the shutdown settled this process's turns, before the log's last writes.
  await parts.lease.stop();
  await parts.log.close();
  await pages?.close();
  parts.rpc?.close();
  await parts.redis?.close();
  await parts.db.$disconnect();
  if (activeProcessRecords() === parts.processRecords) setProcessRecords(undefined);
}

/**
 * What every other part stands on: the database, the process records, the bus, the event log and
 * sessions, this process's lease (with the orphan sweep and the start check) and approvals.
 */
async function openCore(config: BridgeConfig, options: BridgeOptions) {
  const { db } = await store.openDb(config.home, config.databaseUrl);
  // Shell commands, background tasks and terminals a bridge killed with SIGKILL left running.
  const processRecords = new ProcessRecords(path.join(config.home, "run", "processes"));
  // Records of a live process (`worldline acp` next to this one) are left alone.
  const killed = await processRecords.cleanupOrphans();
  if (killed.length > 0)
    process.stderr.write(`[worldline] stopped ${killed.length} process(es) left running by a bridge that died\n`);
  setProcessRecords(processRecords);
  // Team mode: other bridges' appends arrive over Redis; otherwise the database itself is tailed.
  const redis = config.redisUrl ? await connectRedis(config.redisUrl, config.redisPrefix) : null;
  const log = new EventLog(db, redis?.bus);
  // Runners dial this bridge (server/runners); a session on one finds its workspace through its host.
  const runners = new RunnerHub({ db });
  const { files, hosts } = createHosts(config, runners);
  const sessions = new Sessions(
    db,
    log,
    (runner, workspace, options) => hosts.of(runner).checkWorkspace(workspace, options),
    new WorkspacePlacement(new ProtectedHome(config.home), config.hubRoots),
  );
  const lease = new OwnerLease(db, { kind: options.kind ?? "web", ...options.lease });
  const approvals = new ApprovalService({
    db,
    log,
    sessions,
    ownerId: lease.id,
    liveness: (ownerId) => lease.liveness(ownerId),
  });
  // Turns and requests of owners that are gone (killed, crashed) are interrupted now and whenever
  // another dies, except turns waiting on a person: the runtime takes those over once it exists.
  const waiting = { keep: (live: string[]) => resumableTurnIds(db, live) };
  const sweep = () =>
    sweepOrphans({
      db,
      log,
      lease,
      keepWaiting: (live) => waiting.keep(live),
      interruptApprovals: (live, kept) => approvals.interruptOrphans(live, kept),
    });
  await lease.start();
  await sweep();
  lease.onBeat(sweep);
  await reportConsistency(db);
  return { config, db, processRecords, redis, log, runners, files, hosts, sessions, lease, approvals, waiting, sweep };
}

type Core = Awaited<ReturnType<typeof openCore>>;

/**
 * The host of every workspace (server/host): this machine's, made of the local domains' code
 * (file views, node-pty, shadow repositories, skills, the prompt's files, the folder check),
 * and each runner's (server/runners). Everything that touches a workspace gets it from `hosts`.
 */
function createHosts(config: BridgeConfig, runners: RunnerHub) {
  const { files, host } = thisMachine(config.home);
  const hosts = new WorkspaceHosts(
    host,
    (runner, fence) => runners.hostFor(runner, fence),
    (listener) => {
      const here = files.onChange((workspace, paths) => listener(null, workspace, paths));
      const there = runners.onFilesChanged(listener);
      return () => {
        here();
        there();
      };
    },
  );
  return { files, hosts };
}

/** This machine's host, with WORLDLINE_HOME for its shadow repositories (also for the loop bench). */
export function thisMachine(home: string): { files: WorkspaceFiles; host: LocalWorkspaceHost } {
  // No file route, tool, tree or search of a session opens a file in the data folder.
  const protectedHome = new ProtectedHome(home);
  const files = new WorkspaceFiles({ home: protectedHome });
  const shadowRepos = new LocalShadowRepos({ home });
  const host = new LocalWorkspaceHost(
    {
      files,
      openPty: localPtyOpener(),
      checkWorkspace: resolveWorkspacePath,
      worktreesFolder: async () => path.join(home, "worktrees"),
      snapshots: (workspace) => shadowRepos.open(workspace),
      workspaceSkills: (workspace) => listSkills({ workspace }),
      workspacePrompt: readWorkspacePrompt,
    },
    { home: protectedHome },
  );
  return { files, host };
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
    defaultModel: () => settings.resolveDefaultModel(),
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

/** The Next.js pages, loading in the background: requests wait for them; a failure to load answers each with it. */
function loadPages(config: BridgeConfig, dev: boolean) {
  const loading = (async () => {
    const { default: next } = await import("next");
    const app = next({ dev, dir: ROOT_DIR, hostname: config.host, port: config.port });
    await app.prepare();
    return { app, handler: app.getRequestHandler() };
  })();
  loading.catch((error: unknown) =>
    process.stderr.write(`[worldline] the web UI failed to load: ${errorMessage(error)}\n`),
  );
  return {
    handle: async (req: IncomingMessage, res: ServerResponse) => (await loading).handler(req, res),
    close: async () => (await loading.catch(() => undefined))?.app.close(), // pages that never loaded have nothing to close (the failure was logged)
  };
}

/**
 * The start check: repairs what has one right answer and logs, once, what needs a look
 * (`worldline doctor` lists the same). It never stops the start: the sessions it names still open.
 */
async function reportConsistency(db: store.Db): Promise<void> {
  try {
    const findings = await store.checkConsistency(db, { fix: true });
    for (const finding of findings) {
      const what = finding.fixed ? "repaired" : "found (see worldline doctor)";
      console.error(
        `[worldline] start check: ${what} ${finding.kind} in session ${finding.sessionId}: ${finding.detail}`,
      );
    }
  } catch (error) {
    console.error(`[worldline] start check failed: ${errorMessage(error)}`); // the bridge serves regardless
  }
}
