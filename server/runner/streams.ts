import net from "node:net";
import { errorMessage, WorldlineError } from "../errors";
import { listeningInodes, socketsOf, type ListeningSocket } from "../preview/ports";
import { rootsMembers } from "../processes";
import { STREAM_CHUNK_BYTES, STREAM_WINDOW_BYTES } from "../protocol";

/** Preview streams a runner keeps open at once, all hubs' sessions together (a page loads a few dozen modules at once). */
const MAX_RUNNER_STREAMS = 256;
/** A port that neither accepts nor refuses (a firewall, a hung server) fails the open after this. */
const CONNECT_TIMEOUT_MS = 10_000;

/** How a stream's bytes and end go back to the hub; `route` is the asking bridge's (server/protocol/runner.ts). */
export interface StreamReplies {
  streamData(streamId: string, data: Buffer, route: string | undefined): void;
  streamEnd(streamId: string, error: string | undefined, route: string | undefined): void;
}

interface OpenStream {
  socket: net.Socket;
  route: string | undefined;
  /** `runner.stream_end` was sent: nothing more goes out for it. */
  ended: boolean;
  /** Bytes sent to the hub, and how many of them its reader has taken (`stream.flow`). */
  sent: number;
  read: number;
}

/** A root the hub names: a terminal's shell or a command's group, by its pid on this machine. */
export interface PortRoot {
  pid: number;
  kind: "terminal" | "group";
}

/**
 * Previews of a runner session's dev servers, on the runner's side: the ports its processes listen
 * on, read from this machine's /proc as a hub reads its own (server/preview/ports.ts), and byte
 * streams from the hub to a port on this machine's loopback (server/runners/remote-stream.ts).
 */
export class RunnerStreams {
  private readonly streams = new Map<string, OpenStream>();
  /** The last answer of `ports`: unchanged listening sockets and roots, the same answer (a watched session is polled). */
  private lastPorts: { key: string; sockets: ListeningSocket[] } | undefined;

  constructor(private readonly send: StreamReplies) {}

  /**
   * The ports processes under `roots` listen on. Only roots this runner started itself (`own`: its
   * terminals' shells and its commands) are looked at: a hub names processes, it never reaches others.
   */
  async ports(roots: readonly PortRoot[], own: ReadonlySet<number>): Promise<ListeningSocket[]> {
    const mine = roots.filter((root) => own.has(root.pid));
    const listening = await listeningInodes();
    const key = `${mine.map((root) => `${root.kind}:${root.pid}`).join(",")}|${[...listening.keys()].sort().join(",")}`;
    if (this.lastPorts?.key === key) return this.lastPorts.sockets;
    const sockets = await socketsOf(await rootsMembers(mine), listening);
    this.lastPorts = { key, sockets };
    return sockets;
  }

  /** Connects to the port on 127.0.0.1; settles once connected (or refused). */
  open(streamId: string, port: number, route: string | undefined): Promise<null> {
    if (this.streams.has(streamId))
      throw new WorldlineError("runner:bad_request", `Stream ${streamId} is already open.`);
    if (this.streams.size >= MAX_RUNNER_STREAMS)
      throw new WorldlineError("preview:busy", `This runner already has ${MAX_RUNNER_STREAMS} preview streams open.`);
    const socket = net.connect({ host: "127.0.0.1", port });
    const stream: OpenStream = { socket, route, ended: false, sent: 0, read: 0 };
    this.streams.set(streamId, stream);
    return new Promise<null>((resolve, reject) => {
      let connected = false;
      const timer = setTimeout(() => socket.destroy(new Error("connect timed out")), CONNECT_TIMEOUT_MS);
      socket.once("connect", () => {
        connected = true;
        clearTimeout(timer);
        socket.setNoDelay(true);
        resolve(null);
      });
      socket.on("data", (chunk: Buffer) => {
        for (let at = 0; at < chunk.length; at += STREAM_CHUNK_BYTES)
          this.send.streamData(streamId, chunk.subarray(at, at + STREAM_CHUNK_BYTES), route);
        stream.sent += chunk.length;
        if (stream.sent - stream.read >= STREAM_WINDOW_BYTES) socket.pause(); // until the hub's reader catches up
      });
      socket.on("end", () => this.finish(streamId, stream));
      socket.on("error", (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        if (connected) return this.finish(streamId, stream, errorMessage(error));
        stream.ended = true; // the open's answer tells the hub; no stream_end for a stream that never was
        const code = error.code === "ECONNREFUSED" ? "preview:refused" : "preview:unreachable";
        reject(new WorldlineError(code, `Port ${port} on the runner: ${errorMessage(error)}`));
      });
      socket.on("close", () => {
        clearTimeout(timer);
        if (this.streams.get(streamId) === stream) this.streams.delete(streamId);
        this.finish(streamId, stream);
      });
    });
  }

  /** Settles once the socket took the bytes (or its buffer drained): the hub sends more only then. */
  write(streamId: string, data: Uint8Array): Promise<null> {
    const { socket } = this.get(streamId);
    return new Promise<null>((resolve) => {
      // A socket that fails meanwhile ends the stream (stream_end); the write itself has nothing more to say.
      if (socket.write(data)) resolve(null);
      else {
        const settle = () => {
          socket.off("drain", settle);
          socket.off("close", settle);
          resolve(null);
        };
        socket.on("drain", settle);
        socket.on("close", settle);
      }
    });
  }

  /** The hub's reader has taken `read` bytes of the stream: within the window again, this runner reads the port again. */
  flow(streamId: string, read: number): void {
    const stream = this.streams.get(streamId);
    if (!stream) return; // ended meanwhile: its stream_end is on its way
    stream.read = Math.max(stream.read, Math.min(read, stream.sent)); // a resent or stale report changes nothing
    if (stream.sent - stream.read < STREAM_WINDOW_BYTES) stream.socket.resume();
  }

  /** The hub's side is done sending. */
  end(streamId: string): void {
    this.streams.get(streamId)?.socket.end();
  }

  close(streamId: string): void {
    const stream = this.streams.get(streamId);
    if (!stream) return;
    stream.ended = true; // the hub closed it: it needs no word back
    this.streams.delete(streamId);
    stream.socket.destroy();
  }

  closeAll(): void {
    for (const id of [...this.streams.keys()]) this.close(id);
  }

  private finish(streamId: string, stream: OpenStream, error?: string): void {
    if (stream.ended) return;
    stream.ended = true;
    this.send.streamEnd(streamId, error, stream.route);
  }

  private get(streamId: string): OpenStream {
    const stream = this.streams.get(streamId);
    if (!stream) throw new WorldlineError("preview:not_found", `No stream ${streamId} on this runner.`);
    return stream;
  }
}
