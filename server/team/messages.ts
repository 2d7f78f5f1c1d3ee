import * as z from "zod";
import { RunnerFrameEvent, RunnerName, RunnerRequest, TerminalInfo, WireError } from "../protocol";
import type { ScreenSnapshot } from "../pty";

/**
 * Every message one bridge sends another (server/team/rpc.ts), as zod schemas: the envelope, and
 * the arguments of each method. A bridge checks what it receives before acting on it, so a message
 * from a bridge of another version, or a corrupted one, is a clear `team:invalid` error, not a crash
 * or a call with undefined arguments.
 */

const sessionId = z.string().min(1);
const terminalId = z.string().min(1);
const viewer = z.string().min(1);
const dimension = z.number().int().positive();

const PromptOptions = z.object({
  reasoning: z.enum(["on", "off"]).optional(),
  images: z.array(z.string()).optional(),
  // JSON turns an array's undefined entries into null.
  imagePreviews: z
    .array(z.string().nullish())
    .transform((previews) => previews.map((preview) => preview ?? undefined))
    .optional(),
  compact: z.object({ focus: z.string().optional() }).optional(),
});

const snapshot = z.custom<ScreenSnapshot>((value) => typeof value === "object" && value !== null, "a screen snapshot");

/** The arguments of each method, by name. */
export const TeamMethods = {
  "turn.prompt": z.object({ sessionId, text: z.string(), options: PromptOptions.optional() }),
  "turn.steer": z.object({ sessionId, text: z.string() }),
  "turn.cancel": z.object({ sessionId, dropQueued: z.boolean().optional() }),
  "pty.attach": z.object({
    sessionId,
    terminalId,
    viewer,
    size: z.object({ cols: dimension, rows: dimension }).optional(),
  }),
  "pty.detach": z.object({ sessionId, terminalId, viewer }),
  "pty.input": z.object({ sessionId, terminalId, viewer, data: z.string() }),
  "pty.resize": z.object({ sessionId, terminalId, viewer, cols: dimension, rows: dimension }),
  "pty.ack": z.object({ sessionId, terminalId, viewer, bytes: z.number().int().nonnegative() }),
  "pty.close": z.object({ sessionId, terminalId }),
  "pty.rename": z.object({ sessionId, terminalId, title: z.string() }),
  "pty.out": z.discriminatedUnion("kind", [
    z.object({ viewer, kind: z.literal("data"), data: z.string() }),
    z.object({ viewer, kind: z.literal("snapshot"), snapshot }),
    z.object({ viewer, kind: z.literal("resync") }),
    z.object({ viewer, kind: z.literal("exit"), exitCode: z.number().int().nullable() }),
  ]),
  // A runner's socket is on one bridge; the others reach it through that one (server/runners/relay.ts).
  "runner.request": z.object({ runner: RunnerName, request: RunnerRequest }),
  /** A frame the runner sent for this bridge; a terminal's or a preview stream's bytes travel as base64 in `data`. */
  "runner.frame": z.object({
    runner: RunnerName,
    event: RunnerFrameEvent,
    frame: z.unknown(),
    data: z.string().optional(),
  }),
} as const;

export type TeamMethod = keyof typeof TeamMethods;
/** What a handler receives (parsed). */
export type TeamArgs<M extends TeamMethod> = z.output<(typeof TeamMethods)[M]>;
/** What a caller sends. */
export type TeamInput<M extends TeamMethod> = z.input<(typeof TeamMethods)[M]>;

/** The answer to each method that is called (not sent), by name: the caller parses it with this. */
export const TeamReplies = {
  "turn.prompt": z.object({ turnId: z.string(), queued: z.boolean() }),
  "turn.steer": z.object({ turnId: z.string(), steered: z.boolean() }),
  "turn.cancel": z.boolean(),
  "pty.attach": z.object({ terminalId, title: z.string() }),
  "pty.close": z.number().int().nullable(),
  "pty.rename": TerminalInfo,
} as const;

export type TeamCall = keyof typeof TeamReplies;
export type TeamReply<M extends TeamCall> = z.output<(typeof TeamReplies)[M]>;

/** A bridge's terminal as recorded in Redis, so the other bridges can list it and forward to its owner. */
export const TerminalEntry = z.object({ owner: z.string().min(1), info: TerminalInfo });
export type TerminalEntry = z.infer<typeof TerminalEntry>;

/** The envelope on the wire: a call (answered by a reply), a reply, or a send (not answered). */
export const TeamMessage = z.object({
  kind: z.enum(["call", "reply", "send"]),
  id: z.string().optional(),
  from: z.string().min(1),
  method: z.string().optional(),
  args: z.unknown().optional(),
  value: z.unknown().optional(),
  /** A failed call's error, details included (a 429's `retry_after_s`, a conflict's paths), so the caller answers as the holder would. */
  error: WireError.optional(),
});
export type TeamMessage = z.infer<typeof TeamMessage>;
