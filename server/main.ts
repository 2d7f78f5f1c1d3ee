import fs from "node:fs";
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { errorMessage } from "./errors";
import { installProcessErrorPolicy } from "./process-errors";
import { AgentRuntime, type AgentTool, type ChatProvider, type RetryPolicy, type RuntimeDeps } from "./agent";
import { connectRedis } from "./bus";
import { ExternalAgents } from "./external-agents";
import { MemoryService } from "./memory";
import { SkillCatalog } from "./skills";
import { SessionTitles } from "./titles";
import { ApprovalService } from "./approvals";
import { CheckpointService } from "./checkpoints";
import { isLoopbackHost, ROOT_DIR, type BridgeConfig } from "./config";
import { ProcessRecords, activeProcessRecords, setProcessRecords } from "./processes";
import { EventLog, SessionJanitor, Sessions } from "./sessions";
import { OwnerLease, SessionClaims, sweepOrphans, type LeaseOptions } from "./leases";
import { PtyManager } from "./pty";
import { RunnerHub } from "./runners";
import { Rpc, TerminalRouter, TurnRouter } from "./team";
import { WorkspaceFiles } from "./files";
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
  const { config } = options;
  installProcessErrorPolicy();
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
  // Runners dial this bridge (server/runners); a session on one finds its workspace through it.
  const runners = new RunnerHub({ db });
  const sessions = new Sessions(db, log, (runner, workspace) => runners.checkWorkspace(runner, workspace));
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

  const files = new WorkspaceFiles();
  const ptys = new PtyManager({
    workspaceOf: async (sessionId) => {
      const session = await sessions.get(sessionId);
      // A session on a runner opens its shells there (server/runners/remote-pty.ts).
      if (session.runner) return { cwd: session.workspace.path, open: runners.ptyOpenerFor(session.runner, sessionId) };
      return session.workspace.path;
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
  const settings = new SettingsService(db, config.home, config.model?.model ?? null);
  const checkpoints = new CheckpointService({ db, log, sessions, home: config.home });
  // Sessions with an agentCommand run an external ACP agent, Worldline being its client.
  const externalAgents = new ExternalAgents();
  // MCP servers of each session's workspace (and of ACP clients), started on a session's first turn.
  const mcp = new SessionMcp({
    home: config.home,
    notice: (sessionId, level, text) => log.append(sessionId, { type: "notice", payload: { level, text } }),
  });
  const memory = new MemoryService(db);
  const skills = new SkillCatalog(config.home);
  const titles = new SessionTitles(sessions);
  const runtime = new AgentRuntime({
    db,
    log,
    sessions,
    config,
    ownerId: lease.id,
    claims: new SessionClaims(db, lease),
    checkpoints,
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
    externalAgents,
    sessionTools: mcp.toolSource(),
    memory,
    skills,
    titles,
    // Every shell command the tools run is written, redacted, to the audit log.
    hostOf: (runner, sessionId) => runners.hostFor(runner, sessionId),
    decorateToolContext: (ctx) => ({
      ...ctx,
      audit: (record) => store.recordCommand(db, { ...record, sessionId: ctx.sessionId, turnId: ctx.turnId }),
    }),
    ...options.agent,
  });
  // A turn whose claim was taken while this bridge was cut off stops; ended turns' unstored statuses are retried.
  lease.onBeat(async () => {
    await runtime.stopFencedTurns();
    await runtime.retryUnsettled();
  });
  checkpoints.attach(runtime);
  // What a session holds in this process, freed on delete and after it idles unwatched.
  const janitor = new SessionJanitor({
    resources: [
      { name: "agent runtime state", forget: (id, why) => runtime.forgetSession(id, why) },
      { name: "checkpoint bookkeeping", forget: (id) => checkpoints.forgetSession(id) },
      { name: "external agent process", forget: (id) => externalAgents.forgetSession(id) },
      { name: "MCP servers", forget: (id) => mcp.forgetSession(id) },
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
  const turns = new TurnRouter({ db, runtime, log, lease, rpc });
  const terminals = new TerminalRouter({ ptys, lease, link: redis, rpc });

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
  const services: BridgeServices = {
    config,
    version: VERSION,
    auth,
    log,
    sessions,
    runtime,
    approvals,
    files,
    settings,
    ptys,
    turns,
    terminals,
    checkpoints,
    shares: new ShareLinks(db),
    people: new People(db, { oidc: config.oidc !== null, oidcDefaultRole: config.oidcDefaultRole }),
    oidc: config.oidc ? new OidcSignIn(config.oidc, auth.secret) : null,
    mcp,
    memory,
    skills,
    audit: { list: (query) => store.listCommands(db, query) },
    janitor,
    externalAgents,
    runners,
  };
  server.on("request", createRequestHandler(services, pages?.handle ?? null));
  const io = attachSocketServer(server, services, { adapter: redis?.adapter });
  runners.attach(server);
  server.on("upgrade", (req, socket) => {
    // socket.io answers its own paths (the UI's and the runners'); no other upgrade is served.
    if (!req.url?.startsWith("/socket.io/") && !req.url?.startsWith(RUNNER_SOCKET_PATH)) socket.destroy();
  });

  const displayHost = config.host.includes(":") ? `[${config.host}]` : config.host;
  if (!isLoopbackHost(config.host)) {
    process.stderr.write(
      `[worldline] WARNING: listening on ${config.host}, reachable from your network (WORLDLINE_ALLOW_LAN=1). The token is still required for every request.\n`,
    );
  }
  let closing: Promise<void> | undefined;
  return {
    url: `http://${displayHost}:${port}`,
    port,
    token,
    services,
    server,
    close: () =>
      (closing ??= (async () => {
        // Stop accepting work first: no new connections, no more socket commands.
        server.close();
        io.disconnectSockets(true);
        janitor.stop();
        await runtime.cancelAll();
        // Snapshots and rows of the last checkpoints may still be being written.
        await checkpoints.settledAll();
        await sharedTaskRegistry.stopAll();
        await externalAgents.closeAll();
        await mcp.close();
        await titles.close();
        await ptys.closeAll();
        await runners.close();
        await new Promise<void>((resolve) => io.close(() => resolve()));
        server.closeAllConnections();
        files.close();
        // After the shutdown settled this process's turns, before the log's last writes.
        await lease.stop();
        await log.close();
        await pages?.close();
        rpc?.close();
        await redis?.close();
        await db.$disconnect();
        if (activeProcessRecords() === processRecords) setProcessRecords(undefined);
      })()),
  };
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
