import type { RedisLink } from "../bus";
import { WorldlineError } from "../errors";
import type { OwnerLease } from "../leases";
import type { PtyManager, Terminal, TerminalInfo, ViewerSink } from "../pty";
import { TerminalEntry, type TeamArgs, type TeamInput } from "./messages";
import type { Rpc } from "./rpc";
import { TerminalOwners } from "./terminal-owners";

type Size = { cols: number; rows: number } | undefined;

/**
 * A session's terminals across the bridges of a deployment. A terminal runs on the bridge that
 * opened it (where the workspace is); its id, session and owner are in a Redis hash per session,
 * so any bridge lists it, and a tab on another bridge views and types into it through the owner:
 * attach, input, resize, acks and close are forwarded there, output comes back to the viewer's
 * bridge. The terminal's own flow control (server/pty) sees a remote viewer like a local one.
 * Input, resizes and acks go to the owner remembered for the terminal (terminal-owners.ts).
 * Without Redis every call goes straight to this bridge's PtyManager.
 */
export class TerminalRouter {
  /** Sinks of tabs here viewing a terminal elsewhere, by viewer key. */
  private readonly remoteViews = new Map<string, ViewerSink>();
  /** Owners of other bridges' terminals, remembered until the registry announces a change (team mode only). */
  readonly owners: TerminalOwners | null;

  constructor(private readonly deps: { ptys: PtyManager; lease: OwnerLease; link: RedisLink | null; rpc: Rpc | null }) {
    const { ptys, rpc, link } = deps;
    this.owners = rpc && link ? new TerminalOwners(link) : null;
    const owners = this.owners;
    if (!rpc || !link || !owners) return;
    const record = (info: TerminalInfo) =>
      link.pub.hset(keyOf(link, info.sessionId), info.terminalId, JSON.stringify({ owner: deps.lease.id, info }));
    // The announcement follows the registry's change on the same connection, so whoever hears it reads the new entry.
    const announce = (info: TerminalInfo) =>
      owners.announce({ sessionId: info.sessionId, terminalId: info.terminalId });
    ptys.on({
      opened: (info) => void Promise.all([record(info), announce(info)]).catch(reportRegistryError),
      renamed: (info) => void record(info).catch(reportRegistryError),
      closed: (info) =>
        void Promise.all([link.pub.hdel(keyOf(link, info.sessionId), info.terminalId), announce(info)]).catch(
          reportRegistryError,
        ),
    });
    const local = (args: { sessionId: string; terminalId: string }) => ptys.get(args.sessionId, args.terminalId);
    rpc.handle("pty.attach", (args, from) => {
      const terminal = local(args);
      terminal.attach(args.viewer, this.forwardingSink(rpc, from, args.viewer), args.size);
      return { terminalId: terminal.id, title: terminal.title };
    });
    rpc.handle("pty.detach", (args) => local(args).detach(args.viewer));
    rpc.handle("pty.input", (args) => local(args).input(args.viewer, args.data));
    rpc.handle("pty.resize", (args) => local(args).resize(args.viewer, args.cols, args.rows));
    rpc.handle("pty.ack", (args) => local(args).ack(args.viewer, args.bytes));
    rpc.handle("pty.close", (args) => ptys.close(args.sessionId, args.terminalId));
    rpc.handle("pty.rename", (args) => ptys.rename(args.sessionId, args.terminalId, args.title));
    rpc.handle("pty.out", (args) => this.deliver(args));
  }

  /** Hears the registry's announcements before any owner is remembered (team mode). */
  async start(): Promise<void> {
    await this.owners?.start();
  }

  /** This bridge's terminals of the session and those of the other live bridges. */
  async list(sessionId: string): Promise<TerminalInfo[]> {
    const here = this.deps.ptys.list(sessionId);
    const { link } = this.deps;
    if (!link) return here;
    const entries = Object.values(await link.pub.hgetall(keyOf(link, sessionId)))
      .map(parseEntry)
      .filter((entry) => entry !== null);
    const live = new Set(await this.deps.lease.liveOwners());
    const elsewhere = entries.filter((entry) => entry.owner !== this.deps.lease.id && live.has(entry.owner));
    return here.concat(elsewhere.map((entry) => entry.info)).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async attach(sessionId: string, terminalId: string, viewer: string, sink: ViewerSink, size: Size) {
    const terminal = this.localTerminal(sessionId, terminalId);
    if (terminal) {
      terminal.attach(viewer, sink, size);
      return { terminalId, title: terminal.title };
    }
    const { owner, rpc } = await this.ownerOf(sessionId, terminalId);
    const key = this.viewerKey(viewer);
    this.remoteViews.set(key, sink);
    return rpc.call(owner, "pty.attach", {
      sessionId,
      terminalId,
      viewer: key,
      size,
    });
  }

  detach(sessionId: string, terminalId: string, viewer: string): void {
    this.toTerminal(sessionId, terminalId, viewer, "pty.detach", {}, (terminal) => terminal.detach(viewer));
    this.remoteViews.delete(this.viewerKey(viewer));
  }

  input(sessionId: string, terminalId: string, viewer: string, data: string): void {
    this.toTerminal(sessionId, terminalId, viewer, "pty.input", { data }, (terminal) => terminal.input(viewer, data));
  }

  resize(sessionId: string, terminalId: string, viewer: string, cols: number, rows: number): void {
    this.toTerminal(sessionId, terminalId, viewer, "pty.resize", { cols, rows }, (terminal) =>
      terminal.resize(viewer, cols, rows),
    );
  }

  ack(sessionId: string, terminalId: string, viewer: string, bytes: number): void {
    this.toTerminal(sessionId, terminalId, viewer, "pty.ack", { bytes }, (terminal) => terminal.ack(viewer, bytes));
  }

  async close(sessionId: string, terminalId: string): Promise<number | null> {
    if (this.localTerminal(sessionId, terminalId)) return this.deps.ptys.close(sessionId, terminalId);
    const { owner, rpc } = await this.ownerOf(sessionId, terminalId);
    return rpc.call(owner, "pty.close", { sessionId, terminalId });
  }

  async rename(sessionId: string, terminalId: string, title: string): Promise<TerminalInfo> {
    if (this.localTerminal(sessionId, terminalId)) return this.deps.ptys.rename(sessionId, terminalId, title);
    const { owner, rpc } = await this.ownerOf(sessionId, terminalId);
    return rpc.call(owner, "pty.rename", { sessionId, terminalId, title });
  }

  /** A local terminal gets the call now (input stays synchronous); a remote one after its owner is looked up. */
  private toTerminal<M extends "pty.detach" | "pty.input" | "pty.resize" | "pty.ack">(
    sessionId: string,
    terminalId: string,
    viewer: string,
    method: M,
    args: Omit<TeamInput<M>, "sessionId" | "terminalId" | "viewer">,
    here: (terminal: Terminal) => void,
  ): void {
    const terminal = this.localTerminal(sessionId, terminalId);
    if (terminal) return here(terminal);
    const { rpc } = this.deps;
    if (!rpc) throw notFound(terminalId);
    // The spread is the method's arguments; TypeScript cannot see through a generic Omit.
    const message = { sessionId, terminalId, viewer: this.viewerKey(viewer), ...args } as TeamInput<M>;
    const known = this.owners?.cached(sessionId, terminalId);
    if (known) return rpc.send(known, method, message);
    void this.ownerOf(sessionId, terminalId).then(
      ({ owner }) => rpc.send(owner, method, message),
      () => undefined, // Closed meanwhile: nothing to forward to.
    );
  }

  private localTerminal(sessionId: string, terminalId: string): Terminal | undefined {
    try {
      return this.deps.ptys.get(sessionId, terminalId);
    } catch (error) {
      if (this.deps.rpc) return undefined;
      throw error;
    }
  }

  /** The live bridge holding another bridge's terminal, and the way to it (team mode only). */
  private async ownerOf(sessionId: string, terminalId: string): Promise<{ owner: string; rpc: Rpc }> {
    const { link, rpc } = this.deps;
    const { owners } = this;
    if (!link || !rpc || !owners) throw notFound(terminalId);
    const since = owners.since();
    const raw = await link.pub.hget(keyOf(link, sessionId), terminalId);
    const owner = raw ? (parseEntry(raw)?.owner ?? null) : null;
    if (!owner || owner === this.deps.lease.id || !(await this.deps.lease.isLive(owner))) {
      owners.forget(sessionId, terminalId);
      throw notFound(terminalId);
    }
    owners.remember(sessionId, terminalId, owner, since);
    return { owner, rpc };
  }

  /** What the owner's terminal sends to a viewer on another bridge. */
  private forwardingSink(rpc: Rpc, to: string, viewer: string): ViewerSink {
    const send = (out: TeamInput<"pty.out">) => rpc.send(to, "pty.out", out);
    return {
      data: (chunk) => send({ viewer, kind: "data", data: Buffer.from(chunk).toString("base64") }),
      snapshot: (snapshot) => send({ viewer, kind: "snapshot", snapshot }),
      resync: () => send({ viewer, kind: "resync" }),
      exit: (exitCode) => send({ viewer, kind: "exit", exitCode }),
    };
  }

  private deliver(out: TeamArgs<"pty.out">): void {
    const sink = this.remoteViews.get(out.viewer);
    if (!sink) return;
    if (out.kind === "data") sink.data(Buffer.from(out.data, "base64"));
    else if (out.kind === "snapshot") sink.snapshot(out.snapshot);
    else if (out.kind === "resync") sink.resync();
    else {
      this.remoteViews.delete(out.viewer);
      sink.exit(out.exitCode);
    }
  }

  private viewerKey(viewer: string): string {
    return `${this.deps.lease.id}/${viewer}`;
  }
}

/** The Redis hash of a session's terminals in the deployment (owner and info per terminal). */
/** A terminal recorded by another bridge, or null (logged) when the entry is not one: then nobody can reach it. */
function parseEntry(raw: string): TerminalEntry | null {
  try {
    return TerminalEntry.parse(JSON.parse(raw));
  } catch (error) {
    console.error("[worldline] a terminal entry in Redis is not one:", error instanceof Error ? error.message : error);
    return null;
  }
}

function keyOf(link: RedisLink, sessionId: string): string {
  return `${link.prefix}:pty:${sessionId}`;
}

function notFound(terminalId: string): WorldlineError {
  return new WorldlineError("pty:not_found", `No terminal "${terminalId}" in this session.`);
}

function reportRegistryError(error: unknown): void {
  console.error("[worldline] terminal registry (redis):", error instanceof Error ? error.message : error);
}
