import fs from "node:fs";
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { closeStorage, openParts, reportConsistency, stopParts, type BridgeOptions, type Parts } from "./bridge";
import { isLoopbackHost, ROOT_DIR, type BridgeConfig } from "./config";
import { errorMessage } from "./errors";
import { loadVapidKeys, Notifier } from "./notify";
import { mayDrive, OidcSignIn } from "./people";
import { Previews, servePreviewsFirst } from "./preview";
import { RUNNER_SOCKET_PATH } from "./protocol";
import * as store from "./store";
import { sharedTaskRegistry } from "./tools";
import {
  attachSocketServer,
  createAuthPolicy,
  createRequestHandler,
  createToken,
  type BridgeServices,
} from "./transport";

export const VERSION: string = JSON.parse(fs.readFileSync(path.join(ROOT_DIR, "package.json"), "utf8")).version;

export { ROOT_DIR };
export { thisMachine, type BridgeOptions } from "./bridge";

export interface Bridge {
  url: string;
  port: number;
  token: string;
  services: BridgeServices;
  server: HttpServer;
  /** Starts loading the web UI now rather than with the first page asked for (nothing without the UI). */
  startPages(): void;
  close(): Promise<void>;
}

/** Starts the bridge: database, domain services, HTTP + socket.io on one port. */
export async function startBridge(options: BridgeOptions): Promise<Bridge> {
  return serveParts(await openParts(options), options);
}

/**
 * The HTTP half, on parts already open (server/bridge): the API, sockets, runners, previews and
 * push on one port. `worldline acp` opens its parts first and serves them once its first prompt
 * is under way, so an editor's first reply does not wait for socket.io, web-push and the routes to load.
 */
export async function serveParts(parts: Parts, options: BridgeOptions): Promise<Bridge> {
  const { config } = options;
  // What a bridge that serves does besides serving, after its parts are open: at start for
  // `worldline serve`, after the first reply for `worldline acp` (neither holds that reply up).
  void reportConsistency(parts.db);
  await parts.routines.start();
  const server = createServer();
  const token = config.token ?? createToken();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => resolve());
  });
  // Next.js (~250 ms to load and prepare) loads once the caller says the bridge is ready
  // (`startPages`, after `worldline serve`'s ready line) or with the first page asked for, which
  // waits: on this one thread, loading it alongside the start-up held the ready line up by as much.
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
  await parts.runners.attach(server, { hostAllowed: (req) => auth.hostAllowed(req) });
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
    startPages: () => pages?.start(),
    close: () => (closing ??= shutdown(parts, { server, io, pages, push: services.push, previews })),
  };
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
  const personOf = (owner: string) => (owner.startsWith("person:") ? owner.slice("person:".length) : null);
  const notifier = new Notifier({
    db,
    log,
    // Push services want a contact (RFC 8292): the hub's https address, else a placeholder address.
    vapid: async () => ({
      ...(await loadVapidKeys(config.home, db, Boolean(config.databaseUrl))),
      subject: config.publicUrl?.startsWith("https:") ? config.publicUrl : "mailto:push@worldline.invalid",
    }),
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
  await stopParts(parts);
  previews.close();
  await new Promise<void>((resolve) => io.close(() => resolve()));
  server.closeAllConnections();
  // The notifier hears the last turns' ends, so it closes after them, before the log.
  await http.push?.close();
  await pages?.close();
  await closeStorage(parts);
}

/** The Next.js pages, loaded once started or asked for: requests wait for them; a failure to load answers each with it. */
function loadPages(config: BridgeConfig, dev: boolean) {
  const open = async () => {
    const { default: next } = await import("next");
    const app = next({ dev, dir: ROOT_DIR, hostname: config.host, port: config.port });
    await app.prepare();
    return { app, handler: app.getRequestHandler() };
  };
  let loading: ReturnType<typeof open> | undefined;
  const load = () => {
    if (loading) return loading;
    loading = open();
    loading.catch((error: unknown) =>
      process.stderr.write(`[worldline] the web UI failed to load: ${errorMessage(error)}\n`),
    );
    return loading;
  };
  return {
    start: () => void load().catch(() => undefined), // the failure is logged above, and answers each request
    handle: async (req: IncomingMessage, res: ServerResponse) => (await load()).handler(req, res),
    close: async () => (await loading?.catch(() => undefined))?.app.close(), // pages that never loaded have nothing to close (the failure was logged)
  };
}
