import { randomUUID } from "node:crypto";
import { Duplex } from "node:stream";
import { errorMessage, isWorldlineError } from "../errors";
import { STREAM_CHUNK_BYTES, STREAM_WINDOW_BYTES } from "../protocol";
import type { RunnerLink } from "./link";

/** Bytes sent to the runner and not yet taken by its socket before writes wait: the hub → runner window. */
const WRITE_WINDOW_BYTES = 1024 * 1024;
/** The runner is told what this side's reader took each time it took this much more (a quarter of its window). */
const READ_REPORT_BYTES = STREAM_WINDOW_BYTES / 4;
/**
 * A runner that sends this far past what this side's reader took is misbehaving (it stops at
 * `STREAM_WINDOW_BYTES`): the stream is dropped rather than buffered without bound.
 */
const READ_HARD_LIMIT_BYTES = 8 * STREAM_WINDOW_BYTES;

/** Where a stream's bytes and end arrive, from `runner.stream_data` and `runner.stream_end`. */
export interface StreamSink {
  data(chunk: Uint8Array): void;
  /** The runner's side ended; `error` when it failed (or the runner is gone). */
  end(error?: string): void;
}

/**
 * A TCP connection to a port on a runner's machine, as a Duplex on the hub: what is written goes
 * as `stream.write` (at most a window of bytes unacknowledged), what the runner reads arrives as
 * `runner.stream_data`, at most a window ahead of what this side's reader took, which
 * `stream.flow` reports. It quacks
 * enough like a net.Socket (timeouts, keep-alive, ref) for node:http's client and agents.
 */
export class RemoteStream extends Duplex {
  readonly streamId = randomUUID();
  private readonly opened: Promise<void>;
  private inflight = 0;
  private blocked: ((error?: Error | null) => void) | null = null;
  /** Bytes that came from the runner, and how many taken by the reader it was last told of. */
  private received = 0;
  private reported = 0;
  /** The runner's side is over: nothing to close there. */
  private endedThere = false;
  private idleMs = 0;
  private idleTimer: NodeJS.Timeout | null = null;
  readonly remoteAddress = "127.0.0.1";
  readonly remotePort: number;

  constructor(
    private readonly link: RunnerLink,
    port: number,
  ) {
    super({ allowHalfOpen: false });
    this.remotePort = port;
    link.trackStream(this.streamId, { data: (chunk) => this.fromRunner(chunk), end: (error) => this.endThere(error) });
    this.opened = link.call({ op: "stream.open", streamId: this.streamId, port }, { now: true }).then(
      () => {
        this.emit("connect");
      },
      (error: unknown) => {
        this.endedThere = true;
        this.destroy(asSocketError(error));
        throw error;
      },
    );
    this.opened.catch(() => undefined); // the destroy above tells the stream's user
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.touch();
    this.opened.then(
      () => {
        for (let at = 0; at < chunk.length; at += STREAM_CHUNK_BYTES)
          this.send(chunk.subarray(at, at + STREAM_CHUNK_BYTES));
        if (this.inflight < WRITE_WINDOW_BYTES) callback();
        else this.blocked = callback;
      },
      (error: unknown) => callback(asSocketError(error)),
    );
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.opened
      .then(() => this.link.call({ op: "stream.end", streamId: this.streamId }))
      .then(
        () => callback(),
        (error: unknown) => callback(asSocketError(error)),
      );
  }

  /** The reader wants more: the runner hears what it took, so it reads ahead again. */
  override _read(): void {
    const read = this.received - this.readableLength;
    if (read - this.reported < READ_REPORT_BYTES) return;
    this.reported = read;
    this.tell({ op: "stream.flow", streamId: this.streamId, read });
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.setTimeout(0);
    this.link.forgetStream(this.streamId);
    if (!this.endedThere) {
      this.endedThere = true;
      // After the open settles: a close sent ahead of its open would find nothing to close.
      void this.opened.then(
        () => this.tell({ op: "stream.close", streamId: this.streamId }),
        () => undefined,
      );
    }
    const blocked = this.blocked;
    this.blocked = null;
    blocked?.(error);
    callback(error);
  }

  // What node:http's client and agents call on a socket.
  setTimeout(ms: number, onTimeout?: () => void): this {
    this.idleMs = ms;
    if (onTimeout) this.once("timeout", onTimeout);
    this.touch();
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }

  private send(data: Buffer): void {
    this.inflight += data.length;
    this.link.call({ op: "stream.write", streamId: this.streamId, data }).then(
      () => {
        this.inflight -= data.length;
        if (this.inflight >= WRITE_WINDOW_BYTES || !this.blocked) return;
        const blocked = this.blocked;
        this.blocked = null;
        blocked();
      },
      (error: unknown) => this.destroy(asSocketError(error)),
    );
  }

  private fromRunner(chunk: Uint8Array): void {
    this.touch();
    if (this.readableLength + chunk.byteLength > READ_HARD_LIMIT_BYTES)
      return void this.destroy(new Error("The runner sent more than the preview stream may buffer."));
    this.received += chunk.byteLength;
    this.push(chunk);
  }

  private endThere(error: string | undefined): void {
    this.endedThere = true;
    if (error) this.destroy(Object.assign(new Error(error), { code: "ECONNRESET" }));
    else this.push(null);
  }

  /** A request whose answer says nothing more (the stream's end tells what went wrong). */
  private tell(
    operation: { op: "stream.flow"; streamId: string; read: number } | { op: "stream.close"; streamId: string },
  ): void {
    this.link.call(operation).catch(() => undefined);
  }

  private touch(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (this.idleMs <= 0 || this.destroyed) return;
    this.idleTimer = setTimeout(() => this.emit("timeout"), this.idleMs);
    this.idleTimer.unref();
  }
}

/** A runner's refusal as node:http's client and http-proxy-3 expect a socket's error (`code` ECONNREFUSED, …). */
function asSocketError(error: unknown): Error {
  const code = isWorldlineError(error) && error.code === "preview:refused" ? "ECONNREFUSED" : "ECONNRESET";
  return Object.assign(new Error(errorMessage(error)), { code });
}
