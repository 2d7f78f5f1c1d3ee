import serializePackage from "@xterm/addon-serialize";
import headlessPackage from "@xterm/headless";
import { MIRROR_SCROLLBACK_LINES } from "./limits";

// Both packages are CommonJS: Node's ESM loader only offers their default export.
const { SerializeAddon } = serializePackage;
const { Terminal: HeadlessTerminal } = headlessPackage;

export interface ScreenSnapshot {
  /** Escape sequences that rebuild the screen, scrollback, cursor and modes in a fresh xterm. */
  data: string;
  cols: number;
  rows: number;
}

/**
 * The bridge's copy of a terminal's screen: a headless xterm fed every byte the pty
 * produced, so a new or reconnecting viewer can start from the current screen.
 */
export class ScreenMirror {
  private readonly term: InstanceType<typeof HeadlessTerminal>;
  private readonly serializer = new SerializeAddon();
  private disposed = false;

  constructor(cols: number, rows: number) {
    this.term = new HeadlessTerminal({ cols, rows, scrollback: MIRROR_SCROLLBACK_LINES, allowProposedApi: true });
    this.term.loadAddon(this.serializer);
  }

  /** Parses `chunk` asynchronously; `parsed` runs once it is on the screen. */
  write(chunk: Uint8Array, parsed: () => void): void {
    if (this.disposed) return parsed();
    this.term.write(chunk, parsed);
  }

  /**
   * Runs `callback` after everything written so far is parsed and before anything
   * written later: the point at which a snapshot matches an exact byte position.
   */
  afterPending(callback: () => void): void {
    if (this.disposed) return callback();
    this.term.write("", callback);
  }

  snapshot(): ScreenSnapshot {
    return { data: this.serializer.serialize({ scrollback: MIRROR_SCROLLBACK_LINES }), cols: this.term.cols, rows: this.term.rows };
  }

  resize(cols: number, rows: number): void {
    if (this.disposed || (cols === this.term.cols && rows === this.term.rows)) return;
    this.term.resize(cols, rows);
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.term.dispose();
  }
}
