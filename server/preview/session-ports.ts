import { rootsMembers } from "../processes";
import type { PreviewTarget } from "./host-name";
import { listeningInodes, socketsOf, type ListeningSocket } from "./ports";

/** A port a session's process listens on, with its preview address. */
export interface SessionPort {
  port: number;
  pid: number;
  command: string;
  url: string;
}

/** Where a session's processes start: its terminals' shells (a session of their own) and its shell tasks (a group each). */
export interface ProcessRoot {
  pid: number;
  kind: "terminal" | "group";
}

/** How often a watched session with live processes is looked at: a new port shows within a second. */
export const PORT_POLL_MS = 250;
/** A port list younger than this answers "does the session own this port?" for the proxy without reading /proc. */
const OWNERSHIP_FRESH_MS = 1_000;
/**
 * Up to this age a port in the list is still trusted while a background rescan runs: a request
 * never waits on /proc for a port it was allowed a moment ago. A port the session closed keeps
 * its proxy this long at most (the dev server is gone; the proxy answers 502).
 */
const OWNERSHIP_TRUSTED_MS = 5_000;

interface Watcher {
  listeners: Set<(ports: SessionPort[]) => void>;
  timer: NodeJS.Timeout;
  busy: boolean;
  /** What the listeners were last told. */
  sent: SessionPort[];
}

interface Known {
  ports: SessionPort[];
  at: number;
  /** The listening sockets and roots the list was made from: unchanged, the list stands. */
  inodes: string;
  roots: string;
}

export interface SessionPortsOptions {
  /** The session's process roots now, on its host (a runner session's pids are the runner's). */
  roots(sessionId: string): Promise<ProcessRoot[]>;
  /** The runner the session runs on, or null for this machine. */
  runner(sessionId: string): Promise<string | null>;
  /** The listening sockets under `roots` on a runner's machine, as the runner reads them from its /proc. */
  runnerSockets(runner: string, roots: ProcessRoot[]): Promise<ListeningSocket[]>;
  /** The preview address of a port (it depends on the bridge's port, known once it listens). */
  url(target: PreviewTarget): string;
}

/**
 * The TCP ports a session's processes listen on, read from the kernel: the process tree under its
 * terminals and shell tasks, each process's socket descriptors, and /proc/net/tcp{,6}'s listening
 * sockets. Watched sessions are polled, cheaply: a tick reads the two socket tables and walks the
 * process tree only when the set of listening sockets (or the session's roots) changed. A runner
 * session's are read by its runner, the same way, on its machine (server/runner/streams.ts).
 */
export class SessionPorts {
  private readonly known = new Map<string, Known>();
  private readonly watchers = new Map<string, Watcher>();
  private readonly refreshing = new Set<string>();

  constructor(private readonly options: SessionPortsOptions) {}

  async list(sessionId: string): Promise<SessionPort[]> {
    return (await this.scan(sessionId)).ports;
  }

  /**
   * Whether a process of the session listens on the port. A port seen lately is answered at once
   * (a rescan then runs in the background, off the request's path); one not seen is rescanned first.
   */
  async owns(sessionId: string, port: number): Promise<boolean> {
    const known = this.known.get(sessionId);
    const age = known ? Date.now() - known.at : Infinity;
    if (known && age < OWNERSHIP_TRUSTED_MS && known.ports.some((entry) => entry.port === port)) {
      if (age >= OWNERSHIP_FRESH_MS) this.refresh(sessionId);
      return true;
    }
    return (await this.scan(sessionId)).ports.some((entry) => entry.port === port);
  }

  /** Calls `listener` with the session's ports whenever they change (from `initial`); returns the unsubscriber. */
  watch(sessionId: string, initial: SessionPort[], listener: (ports: SessionPort[]) => void): () => void {
    let watcher = this.watchers.get(sessionId);
    if (!watcher) {
      const listeners = new Set<(ports: SessionPort[]) => void>();
      watcher = { listeners, timer: setInterval(() => void this.tick(sessionId), PORT_POLL_MS), busy: false, sent: [] };
      watcher.timer.unref();
      this.watchers.set(sessionId, watcher);
    }
    if (watcher.listeners.size === 0) watcher.sent = initial;
    watcher.listeners.add(listener);
    const held = watcher;
    return () => {
      held.listeners.delete(listener);
      if (held.listeners.size > 0 || this.watchers.get(sessionId) !== held) return;
      clearInterval(held.timer);
      this.watchers.delete(sessionId);
    };
  }

  private refresh(sessionId: string): void {
    if (this.refreshing.has(sessionId)) return;
    this.refreshing.add(sessionId);
    void this.scan(sessionId)
      .catch(() => undefined) // unreadable this time: the next request or tick tries again
      .finally(() => this.refreshing.delete(sessionId));
  }

  forgetSession(sessionId: string): void {
    this.known.delete(sessionId);
  }

  close(): void {
    for (const watcher of this.watchers.values()) clearInterval(watcher.timer);
    this.watchers.clear();
  }

  private async tick(sessionId: string): Promise<void> {
    const watcher = this.watchers.get(sessionId);
    // A tick still reading (a loaded machine) is not overtaken: the next one starts after it.
    if (!watcher || watcher.busy) return;
    watcher.busy = true;
    try {
      // No live process, nothing known to listen: nothing to read (the kernel is asked once the session starts one).
      if ((await this.options.roots(sessionId)).length === 0 && watcher.sent.length === 0) return;
      const after = await this.scan(sessionId).catch(() => undefined); // procfs unreadable this tick: the next one tries again
      if (!after || samePorts(watcher.sent, after.ports)) return;
      watcher.sent = after.ports;
      for (const listener of watcher.listeners) listener(after.ports);
    } finally {
      watcher.busy = false;
    }
  }

  private async scan(sessionId: string): Promise<Known> {
    const startedAt = Date.now();
    const roots = await this.options.roots(sessionId);
    const rootsKey = roots.map((root) => `${root.kind}:${root.pid}`).join(",");
    const runner = await this.options.runner(sessionId);
    // The runner keeps its own "nothing changed" shortcut; this machine's socket tables say nothing of its.
    const listening = runner === null ? await listeningInodes() : undefined;
    const inodesKey = listening ? [...listening.keys()].sort().join(",") : `runner:${runner}`;
    const before = this.known.get(sessionId);
    if (listening && before && before.inodes === inodesKey && before.roots === rootsKey) {
      before.at = Math.max(before.at, startedAt);
      return before;
    }
    const sockets = listening
      ? await socketsOf(await rootsMembers(roots), listening)
      : await this.options.runnerSockets(runner!, roots);
    const ports = sockets.map((socket) => ({
      ...socket,
      url: `${this.options.url({ sessionId, port: socket.port })}/`,
    }));
    const known = { ports, at: startedAt, inodes: inodesKey, roots: rootsKey };
    // Scans overlap (the proxy's and the poll's): an older one finishing last does not overwrite a newer one.
    const newest = this.known.get(sessionId);
    if (!newest || newest.at <= startedAt) this.known.set(sessionId, known);
    return known;
  }
}

function samePorts(a: SessionPort[], b: SessionPort[]): boolean {
  return a.length === b.length && a.every((entry, i) => entry.port === b[i].port && entry.pid === b[i].pid);
}
