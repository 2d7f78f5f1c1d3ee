import headlessPackage from "@xterm/headless";
import type { Socket } from "socket.io-client";
import { PTY_ACK_EVERY_BYTES, type Ack } from "../../../server/protocol";

// CommonJS package: Node's ESM loader only offers its default export.
const { Terminal: HeadlessTerminal } = headlessPackage;
type HeadlessTerminal = InstanceType<typeof HeadlessTerminal>;

/**
 * A terminal viewer as the page behaves: it applies the snapshot, writes binary
 * output into an xterm (headless here) and acknowledges bytes from xterm's write
 * callback in steps of PTY_ACK_EVERY_BYTES. With `xterm: false` it only collects
 * the raw bytes and acknowledges them on arrival.
 */
export class PtyViewer {
  readonly term: HeadlessTerminal | null;
  readonly chunks: Buffer[] = [];
  received = 0;
  snapshots = 0;
  resyncs = 0;
  exitCode: number | null | undefined = undefined;
  private unackedParsed = 0;
  private readonly listeners: Array<[string, (...args: any[]) => void]> = [];
  private onDataHook: ((chunk: Buffer) => void) | null = null;

  constructor(
    readonly socket: Socket,
    readonly sessionId: string,
    readonly terminalId: string,
    readonly options: { cols?: number; rows?: number; xterm?: boolean; keepBytes?: boolean; ackDelayMs?: number } = {},
  ) {
    this.term =
      options.xterm === false
        ? null
        : new HeadlessTerminal({
            cols: options.cols ?? 80,
            rows: options.rows ?? 24,
            scrollback: 1000,
            allowProposedApi: true,
          });
    this.listen("pty.snapshot", (message: { terminalId: string; data: string; cols: number; rows: number }) => {
      if (message.terminalId !== this.terminalId) return;
      this.snapshots++;
      if (!this.term) return;
      this.term.reset();
      this.term.resize(message.cols, message.rows);
      this.term.write(message.data);
    });
    this.listen("pty.data", (terminalId: string, data: Buffer) => {
      if (terminalId !== this.terminalId) return;
      this.received += data.length;
      if (options.keepBytes !== false) this.chunks.push(data);
      this.onDataHook?.(data);
      if (this.term) this.term.write(data, () => this.parsed(data.length));
      else this.parsed(data.length);
    });
    this.listen("pty.resync", (message: { terminalId: string }) => {
      if (message.terminalId === this.terminalId) this.resyncs++;
    });
    this.listen("pty.exit", (message: { terminalId: string; exitCode: number | null }) => {
      if (message.terminalId === this.terminalId) this.exitCode = message.exitCode;
    });
  }

  async attach(): Promise<void> {
    await this.command("pty.attach", {
      sessionId: this.sessionId,
      terminalId: this.terminalId,
      cols: this.options.cols ?? 80,
      rows: this.options.rows ?? 24,
    });
  }

  input(data: string): void {
    this.socket.emit("pty.input", { sessionId: this.sessionId, terminalId: this.terminalId, data });
  }

  onData(hook: ((chunk: Buffer) => void) | null): void {
    this.onDataHook = hook;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString("utf8");
  }

  /** The visible screen, one trimmed string per row, after pending writes are parsed. */
  async screen(): Promise<string[]> {
    const term = this.term;
    if (!term) throw new Error("this viewer has no xterm");
    await new Promise<void>((resolve) => term.write("", resolve));
    const buffer = term.buffer.active;
    const rows: string[] = [];
    for (let y = 0; y < term.rows; y++) rows.push(buffer.getLine(buffer.viewportY + y)?.translateToString(true) ?? "");
    return rows;
  }

  dispose(): void {
    for (const [event, listener] of this.listeners) this.socket.off(event, listener);
    this.term?.dispose();
  }

  private parsed(bytes: number): void {
    this.unackedParsed += bytes;
    if (this.unackedParsed < PTY_ACK_EVERY_BYTES) return;
    const ack = this.unackedParsed;
    this.unackedParsed = 0;
    const send = () => this.socket.emit("pty.ack", { terminalId: this.terminalId, bytes: ack });
    if (this.options.ackDelayMs) setTimeout(send, this.options.ackDelayMs);
    else send();
  }

  private listen<A extends unknown[]>(event: string, listener: (...args: A) => void): void {
    this.socket.on(event, listener);
    this.listeners.push([event, listener as (...args: any[]) => void]);
  }

  private async command(name: string, payload: unknown): Promise<unknown> {
    const ack = (await this.socket.timeout(10_000).emitWithAck(name, payload)) as Ack;
    if (!ack.ok) throw new Error(`${name}: ${ack.error.message}`);
    return ack.data;
  }
}

/**
 * Watches a byte stream for `marker` without keeping it: each chunk is searched whole
 * (Buffer#includes is native, a few ms for 100 MB), plus the seam with the previous
 * chunk. Searching only a chunk's last bytes is not enough: the shell's prompt often
 * follows the marker in the same chunk and can be longer than any fixed window.
 */
export function markerScanner(marker: string): (chunk: Buffer) => boolean {
  const needle = Buffer.from(marker, "latin1");
  let seam = Buffer.alloc(0);
  return (chunk) => {
    const head = Buffer.concat([seam, chunk.subarray(0, needle.length - 1)]);
    const found = head.includes(needle) || chunk.includes(needle);
    seam = Buffer.concat([seam, chunk.subarray(-(needle.length - 1))]).subarray(-(needle.length - 1));
    return found;
  };
}
