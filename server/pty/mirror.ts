import path from "node:path";
import { Worker } from "node:worker_threads";
import {
  MIRROR_LAZY_BYTES,
  MIRROR_RING_BYTES,
  MIRROR_SCROLLBACK_LINES,
  MIRROR_WORKER_IDLE_MS,
  MIRROR_WORKER_MAX_CRASHES,
  MIRROR_WORKER_YOUNG_MB,
} from "./limits";
import { OutputRing } from "./ring";
import { ROOT_DIR } from "../config/root";

/** Plain JavaScript loaded from the sources: the same file whether the bridge runs from server/ or bundled in dist/. */
const MIRROR_WORKER_FILE = path.join(ROOT_DIR, "server", "pty", "mirror-worker.mjs");

export interface ScreenSnapshot {
  /** Escape sequences that rebuild the screen, scrollback, cursor and modes in a fresh xterm. */
  data: string;
  cols: number;
  rows: number;
}

/** A snapshot and the exact output offset it reflects: a viewer continues with the bytes from `offset` on. */
export interface MirrorSnapshot {
  snapshot: ScreenSnapshot;
  offset: number;
}

type MirrorReply =
  | { type: "parsed"; id: string; offset: number; epoch: number }
  | { type: "snapshot"; id: string; req: number; data: string; cols: number; rows: number; offset: number };

type WorkerMessage =
  | { type: "open"; id: string; cols: number; rows: number; scrollback: number; ring: SharedArrayBuffer }
  | { type: "data"; id: string; end: number }
  | { type: "resize"; id: string; cols: number; rows: number }
  | { type: "reset"; id: string; offset: number; epoch: number }
  | { type: "snapshot"; id: string; req: number }
  | { type: "close"; id: string };

/**
 * The one worker thread that parses every terminal's output into its headless xterm
 * (mirror-worker.mjs). One for the whole bridge rather than one per terminal: a worker
 * costs an isolate (~10 MB) and tens of ms to start, terminals are mostly idle, and a
 * flooding terminal's backlog is bounded (and mostly skipped) so it cannot starve the
 * others for long. Started on first use, stopped after a while without terminals.
 */
class MirrorHost {
  private worker: Worker | null = null;
  private readonly mirrors = new Map<string, ScreenMirror>();
  private idleTimer: NodeJS.Timeout | null = null;
  private crashes = 0;

  /** Set after repeated crashes: mirrors answer snapshots from their ring buffer alone. */
  get broken(): boolean {
    return this.crashes >= MIRROR_WORKER_MAX_CRASHES;
  }

  add(mirror: ScreenMirror): void {
    this.mirrors.set(mirror.id, mirror);
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  remove(mirror: ScreenMirror): void {
    this.mirrors.delete(mirror.id);
    if (this.mirrors.size > 0 || !this.worker) return;
    this.idleTimer = setTimeout(() => this.stop(), MIRROR_WORKER_IDLE_MS);
    this.idleTimer.unref();
  }

  post(message: WorkerMessage): void {
    if (this.broken) return;
    this.ensure().postMessage(message);
  }

  private ensure(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(MIRROR_WORKER_FILE, {
      // A small young generation: the worker's garbage is short-lived chunks, and the default (up to ~48 MB) shows up as bridge RSS during a flood.
      resourceLimits: { maxYoungGenerationSizeMb: MIRROR_WORKER_YOUNG_MB },
    });
    // Never what keeps the bridge (or a test) alive.
    worker.unref();
    worker.on("message", (reply: MirrorReply) => this.mirrors.get(reply.id)?.onReply(reply));
    worker.on("error", (error) => console.error("[pty] screen mirror worker failed:", error));
    worker.on("exit", () => {
      if (this.worker !== worker) return; // Stopped on purpose.
      this.worker = null;
      this.crashes++;
      for (const mirror of [...this.mirrors.values()]) mirror.onWorkerLost();
    });
    this.worker = worker;
    return worker;
  }

  private stop(): void {
    const worker = this.worker;
    this.worker = null;
    this.idleTimer = null;
    void worker?.terminate();
  }
}

const host = new MirrorHost();
let mirrorCount = 0;

/**
 * The bridge's copy of a terminal's screen, so a new or reconnecting viewer can start
 * from the current screen. The main thread only copies output into a bounded ring of
 * recent raw output, addressed by byte offset and shared with the worker, and tells the
 * worker how far the output goes; the worker parses it from the ring in place and answers
 * a snapshot request with the serialized screen and the offset of the last byte parsed.
 * A viewer gets that snapshot, then the ring's bytes after the offset, then live output:
 * exact, no gap, nothing twice.
 *
 * Parsing is lazy: the ring gathers MIRROR_LAZY_BYTES before the worker gets them in one
 * piece, and a snapshot or resize hands over whatever waits first, so a screen is always
 * exact. The terminal counts `lag` (bytes not yet parsed) like a viewer's unacknowledged
 * bytes, with marks below the ring's size, so a worker slower than the shell paces it
 * instead of missing output (the worker reads the ring in place, so the ring must not overwrite
 * what it has not parsed). If the ring overran anyway (an exited shell is drained without
 * pausing), the mirror is reset and rebuilt from the ring: its screen and scrollback are
 * right (the ring holds far more lines than the scrollback), but modes set before the ring's
 * start (an alternate screen, colours left on, a scroll region) are lost. That is the
 * trade-off for bounded memory and an unthrottled shell.
 */
export class ScreenMirror {
  readonly id = `mirror-${++mirrorCount}`;
  private readonly ring = new OutputRing(MIRROR_RING_BYTES);
  /** Output offset up to which the worker has been given the output. */
  private posted = 0;
  /** Output offset the worker last reported as parsed: it reads nothing before it any more. */
  private parsed = 0;
  /** Counts resets: a reply about the output before the latest reset is ignored. */
  private epoch = 0;
  /** The ring overwrote output the worker had not parsed (and may have been reading): rebuild. */
  private overran = false;
  private requests = 0;
  private readonly pending = new Map<number, (snapshot: MirrorSnapshot) => void>();
  private disposed = false;

  constructor(
    private cols: number,
    private rows: number,
    /** Called whenever the worker has parsed more: `lag` went down. */
    private readonly onProgress: () => void = () => {},
  ) {
    host.add(this);
    this.open();
  }

  /** Offset just past the newest output byte. */
  get end(): number {
    return this.ring.end;
  }

  /** Output bytes not yet on the mirror's screen (queued in the worker, or not yet handed to it). */
  get lag(): number {
    if (this.disposed || host.broken) return 0;
    return this.ring.end - this.parsed;
  }

  /**
   * Records a chunk of output (the viewers get the same bytes). The worker gets it later, in
   * one large piece: when MIRROR_LAZY_BYTES have gathered, or a snapshot or resize needs the
   * screen. Parsing is most of a terminal's CPU on the bridge, and a large piece is mostly
   * text that scrolls out and is skipped (mirror-skip.mjs), so a flood costs little to mirror.
   */
  write(chunk: Uint8Array): void {
    if (this.disposed || chunk.length === 0) return;
    this.ring.push(chunk);
    if (host.broken) return;
    if (this.ring.start > this.parsed) this.overran = true;
    if (this.overran || this.ring.end - this.posted >= MIRROR_LAZY_BYTES) this.catchUp(false);
  }

  /** A copy of the output from `offset` to now, or null if the ring no longer holds all of it. */
  since(offset: number): Buffer | null {
    return this.ring.since(offset);
  }

  /** The screen after everything written so far, with the offset it reflects. */
  snapshot(): Promise<MirrorSnapshot> {
    if (this.disposed || host.broken) return Promise.resolve(this.replay());
    this.catchUp(true);
    const req = ++this.requests;
    return new Promise((resolve) => {
      this.pending.set(req, resolve);
      host.post({ type: "snapshot", id: this.id, req });
    });
  }

  resize(cols: number, rows: number): void {
    if (this.disposed || (cols === this.cols && rows === this.rows)) return;
    this.cols = cols;
    this.rows = rows;
    // Output written before the resize is parsed at the old size.
    this.catchUp(true);
    host.post({ type: "resize", id: this.id, cols, rows });
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    host.post({ type: "close", id: this.id });
    host.remove(this);
    for (const resolve of this.pending.values()) resolve(this.replay());
    this.pending.clear();
    this.ring.clear();
  }

  /** @internal From the host. */
  onReply(reply: MirrorReply): void {
    if (reply.type === "parsed") {
      if (reply.epoch !== this.epoch) return;
      this.parsed = Math.max(this.parsed, reply.offset);
      if (this.parsed >= this.posted && (this.overran || this.ring.end - this.posted >= MIRROR_LAZY_BYTES))
        this.catchUp(false);
      this.onProgress();
      return;
    }
    const resolve = this.pending.get(reply.req);
    if (!resolve) return;
    this.pending.delete(reply.req);
    if (reply.offset < 0) return resolve(this.replay()); // The worker no longer knew this mirror.
    resolve({ snapshot: { data: reply.data, cols: reply.cols, rows: reply.rows }, offset: reply.offset });
  }

  /** @internal From the host: the worker died; a new one is rebuilt from the ring. */
  onWorkerLost(): void {
    for (const resolve of this.pending.values()) resolve(this.replay());
    this.pending.clear();
    if (this.disposed || host.broken) return;
    this.open();
    this.rebuild();
  }

  private open(): void {
    host.post({
      type: "open",
      id: this.id,
      cols: this.cols,
      rows: this.rows,
      scrollback: MIRROR_SCROLLBACK_LINES,
      ring: this.ring.buffer,
    });
  }

  /** Tells the worker the output goes up to the ring's end: it reads the new bytes from the ring. */
  private post(): void {
    if (this.posted === this.ring.end) return;
    this.posted = this.ring.end;
    host.post({ type: "data", id: this.id, end: this.posted });
  }

  /**
   * Gives the worker the output it has not had yet (or rebuilds the screen from the ring if the
   * ring overran). Unless `now`, waits while the worker still parses the last piece: one piece
   * in flight, the next one bigger; the ring holds what waits, and the terminal's flow control
   * (lag) pauses the shell before the ring could overrun.
   */
  private catchUp(now: boolean): void {
    if (!now && this.posted > this.parsed) return;
    if (this.overran) return this.rebuild();
    this.post();
  }

  private rebuild(): void {
    // From the first whole line the ring holds, so the rebuilt screen starts on a line boundary.
    const from = this.ring.lineStartFrom(this.ring.start);
    this.overran = false;
    host.post({ type: "reset", id: this.id, offset: from, epoch: ++this.epoch });
    this.posted = from;
    this.parsed = from;
    this.post();
  }

  /** Without a worker: no screen, the viewer replays what the ring holds (the other design). */
  private replay(): MirrorSnapshot {
    return { snapshot: { data: "", cols: this.cols, rows: this.rows }, offset: this.ring.start };
  }
}
