import fs from "node:fs";
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { errorMessage } from "./errors";
import { installProcessErrorPolicy } from "./process-errors";
import { AgentRuntime, type AgentTool, type ChatProvider, type RetryPolicy, type RuntimeDeps } from "./agent";
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
import { isLoopbackHost, ROOT_DIR, type BridgeConfig } from "./config";
import { ProcessRecords, activeProcessRecords, setProcessRecords } from "./processes";
import { EventLog, resolveWorkspacePath, SessionJanitor, Sessions } from "./sessions";
import { OwnerLease, SessionClaims, sweepOrphans, type LeaseOptions } from "./leases";
import { localPtyOpener, PtyManager } from "./pty";
import { RunnerHub } from "./runners";
import { Rpc, TerminalRouter, TurnRouter } from "./team";
import { WorkspaceFiles } from "./files";
import { LocalWorkspaceHost, WorkspaceHosts, localHost } from "./host";
import { SettingsService } from "./settings";
import { ShareLinks } from "./sharing";
import { OidcSignIn, People } from "./people";
import * as store from "./store";
import { RUNNER_SOCKET_PATH } from "./protocol";
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
  /** Loop limits and the agent's own tools (todo, task, send_dmail); see RuntimeDeps. */
  agent?: Pick<RuntimeDeps, "maxSteps" | "compactionThreshold">;
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
  const parts = await startParts(options);
  const { config } = options;
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
  });
  const services = bridgeServices(parts, auth);
  server.on("request", createRequestHandler(services, pages?.handle ?? null));
  const io = attachSocketServer(server, services, { adapter: parts.redis?.adapter });
  parts.runners.attach(server);
  server.on("upgrade", (req, socket) => {
    // socket.io answers its own paths (the UI's and the runners'); no other upgrade is served.
    if (!req.url?.startsWith("/socket.io/") && !req.url?.startsWith(RUNNER_SOCKET_PATH)) socket.destroy();
  });

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
    close: () => (closing ??= shutdown(parts, { server, io, pages })),
  };
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
    shares: new ShareLinks(db),
    people: new People(db, { oidc: config.oidc !== null, oidcDefaultRole: config.oidcDefaultRole }),
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
  };
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
    hooks,
  });
  checkpoints.attach(runtime);
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
  };
  return { ...core, ...domain, rpc, turns, terminals };
}

type Parts = Awaited<ReturnType<typeof startParts>>;

/** Stops accepting work first (no new connections, no more socket commands), then closes each part. */
async function shutdown(
  parts: Parts,
  http: { server: HttpServer; io: ReturnType<typeof attachSocketServer>; pages: ReturnType<typeof loadPages> | null },
): Promise<void> {
  const { server, io, pages } = http;
  server.close();
  io.disconnectSockets(true);
  parts.janitor.stop();
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
  await parts.runners.close();
  await new Promise<void>((resolve) => io.close(() => resolve()));
  server.closeAllConnections();
  parts.files.close();
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
  const sessions = new Sessions(db, log, (runner, workspace) => hosts.of(runner).checkWorkspace(workspace));
  const lease = new OwnerLease(db, { kind: options.kind ?? "web", ...options.lease });
  const approvals = new ApprovalService({
    db,
    log,
    sessions,
    ownerId: lease.id,
    liveness: (ownerId) => lease.liveness(ownerId),
  });
  // Turns and requests of owners that are gone (killed, crashed) are interrupted now and whenever another dies.
  const sweep = () => sweepOrphans({ db, log, lease, interruptApprovals: (live) => approvals.interruptOrphans(live) });
  await lease.start();
  await sweep();
  lease.onBeat(sweep);
  await reportConsistency(db);
  return { config, db, processRecords, redis, log, runners, files, hosts, sessions, lease, approvals };
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
  const files = new WorkspaceFiles();
  const shadowRepos = new LocalShadowRepos({ home });
  const host = new LocalWorkspaceHost({
    files,
    openPty: localPtyOpener(),
    checkWorkspace: resolveWorkspacePath,
    snapshots: (workspace) => shadowRepos.open(workspace),
    workspaceSkills: (workspace) => listSkills({ workspace }),
    workspacePrompt: readWorkspacePrompt,
  });
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
  parts: Pick<RuntimeDeps, "externalAgents" | "memory" | "skills" | "titles" | "hooks"> & {
    diagnostics: DiagnosticsService;
    checkpoints: CheckpointService;
    settings: SettingsService;
    mcp: SessionMcp;
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
      )(builtinTools()),
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
    hooks: parts.hooks,
    hosts,
    // Every shell command the tools run is written, redacted, to the audit log.
    decorateToolContext: (ctx) => ({
      ...ctx,
      // Edits end with the language server's errors in the file (server/diagnostics), on the session's host.
      diagnose: (file, text) =>
        parts.diagnostics.afterEdit(
          { sessionId: ctx.sessionId, workspace: ctx.cwd, host: ctx.host ?? localHost },
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
 * The start check (issue 29): repairs what has one right answer and logs, once, what needs a look
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
