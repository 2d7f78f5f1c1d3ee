import { errorMessage, WorldlineError, type ErrorCode } from "../errors";
import type { Fence } from "../host";

/** The sinks and options of a runner's link (link.ts), and how it reports what a runner sent. */

/** Where a runner's started commands send their output and end. */
export interface ProcessSink {
  /** `stream` is "stderr" for a stdio program's stderr (server/runners/remote-stdio.ts). */
  output(chunk: string, stream?: "stderr"): void;
  exit(info: { code: number | null; signal: NodeJS.Signals | null; leftoversStopped: boolean }): void;
  /** The runner is gone (grace over, or it came back as a new process): the command's fate is unknown. */
  lost(error: WorldlineError): void;
}

/** Where a runner terminal's output and end go (server/runners/remote-pty.ts). */
export interface PtySink {
  data(chunk: Uint8Array): void;
  /** null: the shell's exit status is unknown (the runner is gone). */
  exit(exitCode: number | null): void;
}

export interface CallOptions {
  fence?: Fence;
  signal?: AbortSignal;
  /** Fail at once when the runner is not connected (a session being created), instead of waiting the grace. */
  now?: boolean;
}

/** The runner's code as one of ours: a bare kind gets the `runner` domain, a kind this version does not know becomes `internal`. */
export function ensureCode(code: string): ErrorCode {
  return WorldlineError.fromWire({ code: code.includes(":") ? code : `runner:${code}`, message: "" }).code;
}

/** A bounded sample of a refused frame for the log. */
export function safeSample(raw: unknown): string {
  try {
    return JSON.stringify(raw).slice(0, 200);
  } catch (error) {
    return `(not serialisable: ${errorMessage(error)})`;
  }
}
