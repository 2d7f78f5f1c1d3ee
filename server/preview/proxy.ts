import { Agent, type ClientRequestArgs, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { ProxyServer } from "http-proxy-3";
import { PreviewGrants } from "./grants";
import { parsePreviewHost, previewOrigin, type PreviewTarget } from "./host-name";
import { FRAME_PATH, framePage, PICKER_PATH, pickerScript } from "./picker";
import type { SessionPorts } from "./session-ports";

/** Where the IDE's redirect lands on a preview host with its ticket. */
export const AUTH_PATH = "/__worldline/auth";

/** A dev server that accepts a request but never answers: the browser gets a 504 page instead of waiting forever. */
const UPSTREAM_TIMEOUT_MS = 120_000;
/** Idle keep-alive connections kept per dev server: a page loads dozens of modules at once. */
const MAX_FREE_SOCKETS = 16;

export interface PreviewProxyOptions {
  ports: SessionPorts;
  grants: PreviewGrants;
  /** Whether a session exists (on this bridge's store). */
  sessionExists(sessionId: string): Promise<boolean>;
  /** The runner a session runs on, or null for this machine. */
  runnerOf(sessionId: string): Promise<string | null>;
  /** A connection to a port on a runner's machine, through its link (server/runners/remote-stream.ts). */
  connect(runner: string, port: number): Duplex;
  /** The bridge's port: preview hosts are `p<port>-<session>.localhost:<this port>`. */
  bridgePort: number;
  /** The IDE's origins (the bridge's allowed hosts): the only pages that may frame a preview or talk to its picker. */
  ideOrigins: readonly string[];
}

/**
 * Previews on their own origins: every request and upgrade whose Host is a preview
 * host is answered here, before the IDE's own checks, and never reaches the IDE's routes. Without
 * the preview cookie a page load goes to the IDE for a ticket and anything else gets 401; a session
 * or port that is not there is 404; then the request is proxied (http-proxy-3, WebSockets included)
 * to the port on 127.0.0.1: this machine's, or for a runner session its runner's, reached through
 * the runner's link by an agent whose connections are streams over it.
 */
export class PreviewProxy {
  private proxy?: Promise<ProxyServer>;
  private readonly agent = new Agent({ keepAlive: true, maxFreeSockets: MAX_FREE_SOCKETS });
  private readonly runnerAgents = new Map<string, RunnerAgent>();
  private readonly frameAncestors: string;

  constructor(private readonly options: PreviewProxyOptions) {
    // CSP source expressions cannot name an IPv6 literal (`http://[::1]:port`): those are left out.
    const framers = options.ideOrigins.filter((origin) => !origin.includes("["));
    this.frameAncestors = `frame-ancestors 'self' ${framers.join(" ")}`;
  }

  /** http-proxy-3, loaded with the first preview request: most bridges never serve one, and start without it. */
  private server(): Promise<ProxyServer> {
    return (this.proxy ??= import("http-proxy-3").then(({ createProxyServer }) => {
      const proxy = createProxyServer({ ws: true, xfwd: true, proxyTimeout: UPSTREAM_TIMEOUT_MS });
      proxy.on("proxyReq", (proxyReq) => stripGrant(proxyReq));
      proxy.on("proxyReqWs", (proxyReq) => stripGrant(proxyReq));
      proxy.on("proxyRes", (proxyRes, _req, res) => {
        // Only the IDE (and the page itself) may frame a preview: an authenticated preview framed elsewhere is clickjackable.
        if (!res.headersSent) res.setHeader("content-security-policy", this.frameAncestors);
        // A dev server that dies mid-body: end the browser's response too, never leave it waiting.
        proxyRes.on("aborted", () => res.destroy());
        proxyRes.on("error", () => res.destroy());
      });
      return proxy;
    }));
  }

  /** Answers the request if its Host is a preview host; false leaves it to the IDE. */
  handleRequest(req: IncomingMessage, res: ServerResponse): boolean {
    const target = parsePreviewHost(req.headers.host, this.options.bridgePort);
    if (target === undefined) return false;
    void this.serve(req, res, target).catch(() => shortPage(res, 502, "The preview failed."));
    return true;
  }

  /** Takes the upgrade if its Host is a preview host; false leaves it to socket.io. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const target = parsePreviewHost(req.headers.host, this.options.bridgePort);
    if (target === undefined) return false;
    socket.on("error", () => socket.destroy()); // a browser gone mid-handshake: nothing to tell it
    void this.upgrade(req, socket, head, target).catch(() => refuseUpgrade(socket, 502));
    return true;
  }

  close(): void {
    void this.proxy?.then((proxy) => proxy.close());
    this.agent.destroy();
    for (const agent of this.runnerAgents.values()) agent.destroy();
    this.runnerAgents.clear();
  }

  private async serve(req: IncomingMessage, res: ServerResponse, target: PreviewTarget | "malformed"): Promise<void> {
    if (target === "malformed")
      return shortPage(res, 400, "This is not a preview address: p<port>-<session>.localhost.");
    const url = new URL(req.url ?? "/", "http://preview.invalid");
    if (url.pathname === AUTH_PATH) return this.redeem(res, url, target);
    if (!this.options.grants.allowed(req, target)) {
      if (!isPageLoad(req)) return shortPage(res, 401, "Open this preview from Worldline.");
      res.writeHead(302, { location: this.ideAuthorizeUrl(req, target, url), "cache-control": "no-store" });
      return void res.end();
    }
    const missing = await this.missing(target);
    if (missing) return shortPage(res, 404, missing);
    if (url.pathname === PICKER_PATH) return sendText(res, "text/javascript", pickerScript(this.options.ideOrigins));
    if (url.pathname === FRAME_PATH)
      return sendText(res, "text/html", framePage(), { "content-security-policy": this.frameAncestors });
    const agent = (await this.runnerAgent(target.sessionId)) ?? this.agent;
    const proxy = await this.server();
    proxy.web(req, res, { target: `http://127.0.0.1:${target.port}`, agent }, (error) => {
      const refused = (error as NodeJS.ErrnoException).code === "ECONNREFUSED";
      if (res.headersSent) return void res.destroy();
      shortPage(res, 502, refused ? "Nothing answers on this port any more." : "The dev server closed the connection.");
    });
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, target: PreviewTarget | "malformed") {
    if (target === "malformed") return refuseUpgrade(socket, 400);
    if (!this.options.grants.allowed(req, target)) return refuseUpgrade(socket, 401);
    if (await this.missing(target)) return refuseUpgrade(socket, 404);
    const agent = await this.runnerAgent(target.sessionId);
    const proxy = await this.server();
    proxy.ws(req, socket, head, { target: `http://127.0.0.1:${target.port}`, ...(agent ? { agent } : {}) }, () =>
      refuseUpgrade(socket, 502),
    );
  }

  /** For a runner session, the agent whose connections go through its runner; undefined on this machine. */
  private async runnerAgent(sessionId: string): Promise<Agent | undefined> {
    const runner = await this.options.runnerOf(sessionId);
    if (runner === null) return undefined;
    let agent = this.runnerAgents.get(runner);
    if (!agent) {
      agent = new RunnerAgent((port) => this.options.connect(runner, port));
      this.runnerAgents.set(runner, agent);
    }
    return agent;
  }

  /** Why a target cannot be previewed (unknown session, a port it does not listen on), or undefined. */
  private async missing(target: PreviewTarget): Promise<string | undefined> {
    if (!(await this.options.sessionExists(target.sessionId))) return "No such session.";
    if (!(await this.options.ports.owns(target.sessionId, target.port)))
      return `No process of this session listens on port ${target.port}.`;
    return undefined;
  }

  /** `/__worldline/auth?ticket=…&next=/path`: a valid ticket becomes this host's cookie. */
  private redeem(res: ServerResponse, url: URL, target: PreviewTarget): void {
    const ticket = url.searchParams.get("ticket") ?? "";
    if (!this.options.grants.redeem(ticket, target))
      return shortPage(
        res,
        401,
        "This preview link was already used or has expired; open the preview from Worldline again.",
      );
    res.writeHead(302, {
      location: safePath(url.searchParams.get("next")),
      "set-cookie": this.options.grants.cookie(target),
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
    });
    res.end();
  }

  /** The IDE's address that hands out a ticket, on the origin the browser came from when it says so. */
  private ideAuthorizeUrl(req: IncomingMessage, target: PreviewTarget, url: URL): string {
    const referrer = req.headers.referer ? safeOrigin(req.headers.referer) : undefined;
    const ide = referrer && this.options.ideOrigins.includes(referrer) ? referrer : this.options.ideOrigins[0];
    const path = encodeURIComponent(url.pathname + url.search);
    return `${ide}/api/v1/sessions/${encodeURIComponent(target.sessionId)}/preview/authorize?port=${target.port}&path=${path}`;
  }

  /** The preview origin of a target on this bridge. */
  origin(target: PreviewTarget): string {
    return previewOrigin(target, this.options.bridgePort);
  }
}

/** Keep-alive connections to a runner's ports, each a stream over the runner's link. */
class RunnerAgent extends Agent {
  constructor(private readonly open: (port: number) => Duplex) {
    super({ keepAlive: true, maxFreeSockets: MAX_FREE_SOCKETS });
  }

  override createConnection(options: ClientRequestArgs): Duplex {
    return this.open(Number(options.port));
  }
}

/** A browser navigating (a page load), as opposed to a script's fetch or an image. */
function isPageLoad(req: IncomingMessage): boolean {
  if (req.method !== "GET" && req.method !== "HEAD") return false;
  const mode = req.headers["sec-fetch-mode"];
  if (mode !== undefined) return mode === "navigate";
  return (req.headers.accept ?? "").includes("text/html");
}

/** A same-origin path to go on to; anything else (`//host`, `http:…`) is the root. */
export function safePath(next: string | null): string {
  if (!next || !next.startsWith("/") || next.startsWith("//") || next.startsWith("/\\")) return "/";
  return next;
}

function safeOrigin(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined; // not a URL: no origin to honour
  }
}

function stripGrant(proxyReq: {
  getHeader(name: string): unknown;
  setHeader(name: string, value: string): void;
  removeHeader(name: string): void;
}): void {
  const cookie = proxyReq.getHeader("cookie");
  const kept = PreviewGrants.withoutGrant(typeof cookie === "string" ? cookie : undefined);
  if (kept) proxyReq.setHeader("cookie", kept);
  else proxyReq.removeHeader("cookie");
}

function shortPage(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) return void res.destroy();
  const body = `<!doctype html><meta charset="utf-8"><title>Preview: ${status}</title><p style="font:14px system-ui;padding:2rem">${message}</p>\n`;
  res.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
  res.end(body);
}

function sendText(res: ServerResponse, type: string, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(200, { "content-type": `${type}; charset=utf-8`, "cache-control": "no-store", ...headers });
  res.end(body);
}

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  404: "Not Found",
  502: "Bad Gateway",
};

function refuseUpgrade(socket: Duplex, status: number): void {
  if (socket.writable)
    socket.end(`HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  else socket.destroy();
}
