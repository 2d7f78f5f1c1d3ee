import { BatchBuffers, type Ledger } from "./batch-buffers";
import { FlowControl } from "./flow-control";
import {
  FLOOD_BATCH_BYTES,
  FLOOD_BATCH_MS,
  MAX_BATCH_BYTES,
  MIRROR_HIGH_WATERMARK_BYTES,
  MIRROR_LOW_WATERMARK_BYTES,
  OUTPUT_BATCH_MS,
  PAUSED_EXIT_POLL_MS,
} from "./limits";
import { ScreenMirror, type ScreenSnapshot } from "./mirror";
import { openLocalPty, type PtyOpener, type PtyProcess } from "./pty-process";

/** Where a terminal's output goes for one viewer (a socket in a tab, or a test). */
export interface ViewerSink {
  /** Live output; the viewer acknowledges its byte length once parsed. */
  data(chunk: Uint8Array): void;
  /** The current screen: replaces whatever the viewer shows; live data follows. */
  snapshot(snapshot: ScreenSnapshot): void;
  /** The viewer fell too far behind: live data stops until it has caught up, then a snapshot comes. */
  resync(): void;
  /** The shell is gone; every byte it wrote was sent before this. */
  exit(exitCode: number | null): void;
}

export interface TerminalOptions {
  id: string;
  sessionId: string;
  title: string;
  cwd: string;
  shell: string;
  args: string[];
  env: Record<string, string>;
  cols: number;
  rows: number;
  onExit(terminal: Terminal, exitCode: number | null): void;
  /** Where the shell runs: this machine unless a runner's opener is given. */
  open?: PtyOpener;
}

type ViewerState = "syncing" | "live" | "resync";

interface Viewer {
  id: string;
  sink: ViewerSink;
  state: ViewerState;
  /** Which snapshot request this viewer waits for: an older answer is ignored. */
  syncRequest: number;
  ledger: Ledger;
  cols?: number;
  rows?: number;
}

const MIRROR = "\0mirror";
/**
 * Where a terminal's read lands when it has no batch, to be copied into a new one. Shared: it is copied from before the
 * next read of any terminal. A pty read is at most 4 KB (the kernel's line-discipline buffer).
 */
const SHARED_READ_BUFFER = Buffer.allocUnsafe(64 * 1024);
/** Viewers that detached owing acknowledgements are remembered (see `debts`) up to this many per terminal. */
const MAX_DEBTS = 64;

/**
 * One shell on a pty, shared by any number of viewers. Output is batched, recorded by
 * the screen mirror (parsed in its worker thread) and sent to live viewers; the pty
 * pauses while any viewer, or the mirror's worker, is too far behind. A viewer waiting for its snapshot is
 * counted too: the output after the snapshot's offset is sent to it from the mirror's
 * ring once the snapshot is there, so it must not outgrow the ring meanwhile.
 */
export class Terminal {
  readonly id: string;
  readonly sessionId: string;
  title: string;
  readonly createdAt = Date.now();
  lastActiveAt = Date.now();
  private readonly pty: PtyProcess;
  private readonly mirror: ScreenMirror;
  private readonly flow = new FlowControl();
  private readonly viewers = new Map<string, Viewer>();
  /** The ledgers of viewers that detached owing acknowledgements, which they may still send (see Ledger). */
  private readonly debts = new Map<string, Ledger>();
  private readonly buffers = new BatchBuffers();
  /** Snapshot requests in flight: the exit is announced only after they were answered. */
  private readonly syncing = new Set<Promise<void>>();
  private syncRequests = 0;
  /**
   * Output read since the last flush: the pty's reads land here directly (see `reads`). A view of the rest of a
   * BATCH_BUFFER_BYTES buffer (see `buffers`), taken at the first output and whenever the last one is used up: each
   * flush sends what the batch holds and the batch goes on in the rest of the same buffer.
   */
  private batch: Buffer | null = null;
  private batchBytes = 0;
  private batchTimer: NodeJS.Timeout | null = null;
  /** When the last batch was sent, if it was a large one (see FLOOD_BATCH_MS); 0 otherwise. */
  private floodFlushAt = 0;
  private pauseTimer: NodeJS.Timeout | null = null;
  private cols: number;
  private rows: number;
  private exited = false;
  /** The shell is gone but node-pty may still hold unread output: reading never pauses again. */
  private draining = false;
  private readonly exitedPromise: Promise<number | null>;

  constructor(private readonly options: TerminalOptions) {
    this.id = options.id;
    this.sessionId = options.sessionId;
    this.title = options.title;
    this.cols = options.cols;
    this.rows = options.rows;
    this.mirror = new ScreenMirror(options.cols, options.rows, () => {
      this.flow.reset(MIRROR, this.mirror.lag);
      this.applyFlow();
    });
    // The mirror paces the shell only if its worker is slower than the shell (wide marks, never dropped).
    this.flow.add(MIRROR, { pinned: true, high: MIRROR_HIGH_WATERMARK_BYTES, low: MIRROR_LOW_WATERMARK_BYTES });
    const { shell, args, cwd, env, cols, rows } = options;
    this.pty = (options.open ?? openLocalPty)({ shell, args, cwd, env, cols, rows }, this.reads);
    this.exitedPromise = new Promise((resolve) => {
      this.pty.onExit(({ exitCode, signal }) => this.finish(signal ? null : exitCode, resolve));
    });
  }

  get pid(): number {
    return this.pty.pid;
  }

  get size(): { cols: number; rows: number } {
    return { cols: this.cols, rows: this.rows };
  }

  get viewerCount(): number {
    return this.viewers.size;
  }

  /** Adds (or re-adds) a viewer: it gets the current screen, then live output. */
  attach(viewerId: string, sink: ViewerSink, size?: { cols: number; rows: number }): void {
    this.detach(viewerId);
    const ledger = this.debts.get(viewerId) ?? { sent: 0, acked: 0 };
    this.debts.delete(viewerId);
    const viewer: Viewer = { id: viewerId, sink, state: "syncing", syncRequest: 0, ledger, ...size };
    this.viewers.set(viewerId, viewer);
    this.flow.add(viewerId);
    if (this.exited) return sink.exit(null);
    // Output still in the batch goes to the mirror first, so it is in the snapshot rather than after it.
    this.flushBatch();
    this.sync(viewer);
    if (size) this.activate(viewer);
  }

  detach(viewerId: string): void {
    const viewer = this.viewers.get(viewerId);
    if (!viewer) return;
    this.viewers.delete(viewerId);
    this.buffers.abandon(viewer.ledger);
    if (viewer.ledger.acked < viewer.ledger.sent) this.debts.set(viewerId, viewer.ledger);
    if (this.debts.size > MAX_DEBTS) this.debts.delete(this.debts.keys().next().value as string);
    this.flow.remove(viewerId);
    this.applyFlow();
  }

  input(viewerId: string | null, data: string): void {
    if (this.exited) return;
    const viewer = viewerId ? this.viewers.get(viewerId) : undefined;
    if (viewer) this.activate(viewer);
    this.lastActiveAt = Date.now();
    this.pty.write(data);
  }

  /** The most recently active viewer decides the size. */
  resize(viewerId: string, cols: number, rows: number): void {
    const viewer = this.viewers.get(viewerId);
    if (!viewer) return;
    viewer.cols = cols;
    viewer.rows = rows;
    this.activate(viewer);
  }

  ack(viewerId: string, bytes: number): void {
    const viewer = this.viewers.get(viewerId);
    if (!viewer) return;
    // Never more than it was sent: a client that claims more only gets its own buffers reused early.
    viewer.ledger.acked = Math.min(viewer.ledger.acked + bytes, viewer.ledger.sent);
    this.buffers.release();
    this.flow.acked(viewerId, bytes);
    // A viewer dropped to resync gets a fresh screen once everything sent to it is processed.
    if (viewer.state === "resync" && this.flow.unacked(viewerId) === 0) this.sync(viewer);
    this.applyFlow();
  }

  /** Kills the shell's whole process tree; resolves with the exit code once the exit was announced. */
  async close(): Promise<number | null> {
    if (!this.exited) await this.pty.kill(this.exitedPromise);
    return this.exitedPromise;
  }

  private activate(viewer: Viewer): void {
    this.lastActiveAt = Date.now();
    if (viewer.cols === undefined || viewer.rows === undefined) return;
    if (viewer.cols === this.cols && viewer.rows === this.rows) return;
    this.cols = viewer.cols;
    this.rows = viewer.rows;
    if (this.exited) return;
    // Output read before the resize is parsed at the old size.
    this.flushBatch();
    this.pty.resize(this.cols, this.rows);
    this.mirror.resize(this.cols, this.rows);
  }

  private sync(viewer: Viewer): void {
    viewer.state = "syncing";
    const request = (viewer.syncRequest = ++this.syncRequests);
    this.flow.setCounting(viewer.id, true);
    // Output from here on is counted for this viewer: it is what the tail will carry.
    this.flow.reset(viewer.id, 0);
    const done = this.mirror.snapshot().then(({ snapshot, offset }) => {
      if (this.viewers.get(viewer.id) !== viewer || viewer.state !== "syncing" || viewer.syncRequest !== request)
        return;
      const tail = this.mirror.since(offset);
      // The ring overran while the worker answered (only while draining an exited shell): ask again.
      if (!tail) return this.sync(viewer);
      viewer.sink.snapshot(snapshot);
      viewer.state = "live";
      // In batches no larger than live output's, so a frame never gets larger than it would have been.
      for (let at = 0; at < tail.length; at += MAX_BATCH_BYTES)
        viewer.sink.data(tail.subarray(at, at + MAX_BATCH_BYTES));
      viewer.ledger.sent += tail.length;
      this.flow.reset(viewer.id, tail.length);
      this.applyFlow();
    });
    this.syncing.add(done);
    void done.finally(() => this.syncing.delete(done));
  }

  /**
   * Each read lands at the end of the batch, where the callback finds it in place. Without a batch (none yet, or the
   * last one used up) it lands in the shared buffer and is copied into a new one.
   */
  private readonly reads = {
    buffer: (): Buffer => this.batch?.subarray(this.batchBytes) ?? SHARED_READ_BUFFER,
    callback: (length: number, buffer: Buffer): void => {
      const batch = this.batch;
      if (batch && buffer.buffer === batch.buffer && buffer.byteOffset === batch.byteOffset + this.batchBytes) {
        this.batchBytes += length;
      } else {
        if (batch && this.batchBytes + length > batch.length) this.flushBatch();
        this.batch ??= this.buffers.take();
        this.batchBytes += buffer.copy(this.batch, this.batchBytes, 0, length);
      }
      if (this.batchBytes >= MAX_BATCH_BYTES) this.flushBatch();
      else this.batchTimer ??= setTimeout(() => this.flushBatch(), this.batchDelay());
    },
  };

  private flushBatch(): void {
    if (this.batchTimer) clearTimeout(this.batchTimer);
    this.batchTimer = null;
    if (this.batchBytes === 0 || !this.batch) return;
    // Never copied: the chunk is a view that viewers' sockets keep until they wrote it (the mirror's ring copies it),
    // and the batch goes on in the rest of its buffer (where the read the socket has already been given will land).
    const chunk = this.batch.subarray(0, this.batchBytes);
    this.floodFlushAt = chunk.length >= FLOOD_BATCH_BYTES ? performance.now() : 0;
    const rest = this.batch.subarray(this.batchBytes);
    this.batch = rest.length >= MAX_BATCH_BYTES ? rest : null;
    this.batchBytes = 0;
    this.mirror.write(chunk);
    this.flow.reset(MIRROR, this.mirror.lag);
    for (const viewer of this.viewers.values()) {
      if (viewer.state === "resync") continue;
      this.flow.sent(viewer.id, chunk.length);
      // A syncing viewer gets this chunk from the ring, after its snapshot.
      if (viewer.state !== "live") continue;
      viewer.sink.data(chunk);
      viewer.ledger.sent += chunk.length;
      this.buffers.sent(viewer.ledger);
    }
    this.applyFlow();
  }

  /** How long the batch that starts now gathers: longer while output streams (see FLOOD_BATCH_MS). */
  private batchDelay(): number {
    const streaming = this.floodFlushAt > 0 && performance.now() - this.floodFlushAt < OUTPUT_BATCH_MS;
    return streaming ? FLOOD_BATCH_MS : OUTPUT_BATCH_MS;
  }

  private applyFlow(): void {
    if (this.exited) return;
    for (const id of this.flow.stalled()) {
      const viewer = this.viewers.get(id);
      if (!viewer) continue;
      // Too slow to keep up: stop holding everyone back; it catches up from a snapshot.
      viewer.state = "resync";
      this.flow.setCounting(id, false);
      viewer.sink.resync();
    }
    const decision = this.flow.decide();
    if (decision === "pause" && !this.draining) {
      this.pty.pause();
      this.pauseTimer = setInterval(() => this.whilePaused(), PAUSED_EXIT_POLL_MS);
    } else if (decision === "resume") {
      this.stopPauseTimer();
      this.pty.resume();
    }
  }

  /** Notices stalled viewers (no ack arrives to trigger it) and a shell that exited while paused. */
  private whilePaused(): void {
    if (!this.pty.alive()) {
      // node-pty discards unread output shortly after exit unless reading resumes now.
      this.draining = true;
      this.stopPauseTimer();
      this.pty.resume();
      return;
    }
    this.applyFlow();
  }

  private stopPauseTimer(): void {
    if (this.pauseTimer) clearInterval(this.pauseTimer);
    this.pauseTimer = null;
  }

  private finish(exitCode: number | null, announced: (exitCode: number | null) => void): void {
    this.pty.release();
    this.exited = true;
    this.stopPauseTimer();
    this.flushBatch();
    // The exit is shown after the trailing output has reached every viewer, syncing ones included.
    void this.settled().then(() => {
      for (const viewer of this.viewers.values()) viewer.sink.exit(exitCode);
      this.viewers.clear();
      this.buffers.clear();
      this.mirror.dispose();
      this.options.onExit(this, exitCode);
      announced(exitCode);
    });
  }

  private async settled(): Promise<void> {
    while (this.syncing.size > 0) await Promise.allSettled([...this.syncing]);
  }
}
