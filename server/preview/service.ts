import type { Duplex } from "node:stream";
import { WorldlineError } from "../errors";
import { PreviewGrants } from "./grants";
import { previewableSession, previewOrigin, type PreviewTarget } from "./host-name";
import type { ListeningSocket } from "./ports";
import { PreviewProxy } from "./proxy";
import { SessionPorts, type ProcessRoot, type SessionPort } from "./session-ports";

/** A session as previews need it: where it runs. */
export interface PreviewSession {
  runner: string | null;
}

/** How long "this session exists, here" is believed: the proxy asks on every request. */
const SESSION_FRESH_MS = 2_000;

export interface PreviewsOptions {
  /** The bridge's port (preview hosts are on it) and the IDE's origins (allowed to frame previews). */
  bridgePort: number;
  ideOrigins: readonly string[];
  /** Signs preview cookies (the auth policy's secret, shared by a team's bridges). */
  secret: string;
  /** The session's row, or null when there is none. */
  session(sessionId: string): Promise<PreviewSession | null>;
  /** The session's terminals and running shell tasks, on its host (a runner session's pids are the runner's). */
  sessionRoots(sessionId: string): ProcessRoot[];
  /** Ports and connections on runners' machines (server/runners/previews.ts). */
  runners: RunnerPorts;
}

/** What previews need of runners: their sessions' listening sockets, and connections to them. */
export interface RunnerPorts {
  ports(runner: string, roots: ProcessRoot[]): Promise<ListeningSocket[]>;
  connect(runner: string, port: number): Duplex;
}

/**
 * Live previews of a session's dev servers: its listening ports, the tickets and
 * cookies of preview origins, and the proxy that serves them.
 */
export class Previews {
  readonly ports: SessionPorts;
  readonly grants: PreviewGrants;
  readonly proxy: PreviewProxy;
  private readonly sessions = new Map<string, { session: PreviewSession; at: number }>();

  constructor(private readonly options: PreviewsOptions) {
    this.grants = new PreviewGrants(options.secret);
    this.ports = new SessionPorts({
      roots: async (sessionId) => ((await this.session(sessionId)) ? options.sessionRoots(sessionId) : []),
      runner: async (sessionId) => (await this.session(sessionId))?.runner ?? null,
      runnerSockets: (runner, roots) => options.runners.ports(runner, roots),
      url: (target) => this.origin(target),
    });
    this.proxy = new PreviewProxy({
      ports: this.ports,
      grants: this.grants,
      sessionExists: async (sessionId) => (await this.session(sessionId)) !== null,
      runnerOf: async (sessionId) => (await this.session(sessionId))?.runner ?? null,
      connect: (runner, port) => options.runners.connect(runner, port),
      bridgePort: options.bridgePort,
      ideOrigins: options.ideOrigins,
    });
  }

  get bridgePort(): number {
    return this.options.bridgePort;
  }

  origin(target: PreviewTarget): string {
    return previewOrigin(target, this.options.bridgePort);
  }

  /** The session's listening ports, on this machine or (read by the runner) on its runner's. */
  async list(sessionId: string): Promise<SessionPort[]> {
    const session = await this.session(sessionId);
    if (!session) throw new WorldlineError("session:not_found", `No session with id "${sessionId}".`);
    if (!previewableSession(sessionId)) return [];
    return this.ports.list(sessionId);
  }

  /**
   * A one-time ticket for a port the session listens on, and where to send the browser with it.
   * 404 for a port the session does not own.
   */
  async authorize(sessionId: string, port: number, path: string): Promise<string> {
    const ports = await this.list(sessionId);
    if (!ports.some((entry) => entry.port === port))
      throw new WorldlineError("preview:not_found", `No process of this session listens on port ${port}.`);
    const target = { sessionId, port };
    const ticket = this.grants.issueTicket(target);
    const next = encodeURIComponent(path.startsWith("/") && !path.startsWith("//") ? path : "/");
    return `${this.origin(target)}/__worldline/auth?ticket=${ticket}&next=${next}`;
  }

  forgetSession(sessionId: string): void {
    this.sessions.delete(sessionId);
    this.ports.forgetSession(sessionId);
  }

  close(): void {
    this.ports.close();
    this.proxy.close();
  }

  private async session(sessionId: string): Promise<PreviewSession | null> {
    const known = this.sessions.get(sessionId);
    if (known && Date.now() - known.at < SESSION_FRESH_MS) return known.session;
    const session = await this.options.session(sessionId);
    if (session) this.sessions.set(sessionId, { session, at: Date.now() });
    else this.sessions.delete(sessionId);
    return session;
  }
}
