import type { Socket } from "socket.io";
import type * as z from "zod";
import {
  RunnerExit,
  RunnerFilesChanged,
  RunnerOutput,
  RunnerPtyData,
  RunnerPtyExit,
  RunnerResponse,
  RunnerStreamData,
  RunnerStreamEnd,
  type RunnerFrameEvent,
} from "../protocol";
import {
  MALFORMED_FRAMES_PER_WINDOW,
  MALFORMED_WINDOW_MS,
  REFUSALS_LOGGED_PER_WINDOW,
  REFUSAL_LOG_WINDOW_MS,
} from "./limits";
import { safeSample } from "./link-parts";

/** A runner's frame, parsed with its event's schema. */
export type RunnerFrame =
  | { event: "runner.response"; frame: RunnerResponse }
  | { event: "runner.output"; frame: z.infer<typeof RunnerOutput> }
  | { event: "runner.exit"; frame: z.infer<typeof RunnerExit> }
  | { event: "runner.pty_data"; frame: z.infer<typeof RunnerPtyData> }
  | { event: "runner.pty_exit"; frame: z.infer<typeof RunnerPtyExit> }
  | { event: "runner.files_changed"; frame: z.infer<typeof RunnerFilesChanged> }
  | { event: "runner.stream_data"; frame: z.infer<typeof RunnerStreamData> }
  | { event: "runner.stream_end"; frame: z.infer<typeof RunnerStreamEnd> };

/** Parses what a runner sent under `event`; null when its schema refuses it. */
export function parseFrame(event: RunnerFrameEvent, raw: unknown): RunnerFrame | null {
  switch (event) {
    case "runner.response":
      return wrap(event, RunnerResponse.safeParse(raw));
    case "runner.output":
      return wrap(event, RunnerOutput.safeParse(raw));
    case "runner.exit":
      return wrap(event, RunnerExit.safeParse(raw));
    case "runner.pty_data":
      return wrap(event, RunnerPtyData.safeParse(raw));
    case "runner.pty_exit":
      return wrap(event, RunnerPtyExit.safeParse(raw));
    case "runner.files_changed":
      return wrap(event, RunnerFilesChanged.safeParse(raw));
    case "runner.stream_data":
      return wrap(event, RunnerStreamData.safeParse(raw));
    case "runner.stream_end":
      return wrap(event, RunnerStreamEnd.safeParse(raw));
  }
}

function wrap<E extends RunnerFrameEvent, T>(
  event: E,
  parsed: { success: true; data: T } | { success: false },
): RunnerFrame | null {
  return parsed.success ? ({ event, frame: parsed.data } as RunnerFrame) : null;
}

/**
 * What one runner sent that the hub refused, kept from filling the hub's log: at most
 * REFUSALS_LOGGED_PER_WINDOW lines per window (then one line saying how many more were refused), and a
 * connection that keeps sending frames its schemas refuse is closed, with a `SECURITY:` line. Kept per
 * runner (its RunnerLink), so a runner that reconnects does not start over on the log's budget.
 */
export class FrameRefusals {
  private windowStart = 0;
  private logged = 0;
  private unlogged = 0;
  private readonly malformed = new WeakMap<Socket, { since: number; count: number }>();

  constructor(
    private readonly name: string,
    private readonly log: (line: string) => void,
  ) {}

  /** A frame refused (malformed, or about a request or process this bridge never sent). */
  refused(what: string, raw?: unknown): void {
    const now = Date.now();
    if (now - this.windowStart >= REFUSAL_LOG_WINDOW_MS) {
      if (this.unlogged > 0)
        this.log(`runner "${this.name}": ${this.unlogged} more refused frames were not logged (too many)`);
      this.windowStart = now;
      this.logged = 0;
      this.unlogged = 0;
    }
    if (this.logged >= REFUSALS_LOGGED_PER_WINDOW) {
      this.unlogged += 1;
      return;
    }
    this.logged += 1;
    const sample = raw === undefined ? "" : `: ${safeSample(raw)}`;
    this.log(`runner "${this.name}" sent ${what}; refused${sample}`);
  }

  /** A frame from the runner's own socket that its schema refused: counted against that connection. */
  malformedFrom(socket: Socket, event: RunnerFrameEvent, raw: unknown): void {
    this.refused(`a malformed ${event} frame`, raw);
    const now = Date.now();
    let count = this.malformed.get(socket);
    if (!count || now - count.since >= MALFORMED_WINDOW_MS) {
      count = { since: now, count: 0 };
      this.malformed.set(socket, count);
    }
    count.count += 1;
    if (count.count <= MALFORMED_FRAMES_PER_WINDOW || !socket.connected) return;
    this.log(
      `SECURITY: runner "${this.name}" sent more than ${MALFORMED_FRAMES_PER_WINDOW} malformed frames within ` +
        `${MALFORMED_WINDOW_MS / 1000} s; its connection was closed. A runner of another version, or not a runner: ` +
        `check its machine, or revoke it (worldline runners revoke ${this.name}).`,
    );
    socket.disconnect(true);
  }
}
