import * as z from "zod";
import { approvalCommands } from "./approval-commands";
import { EventEnvelope } from "./events";
import { PromptImages } from "./images";
import { presenceCommands, TranscriptSnapshot } from "./sync";
import { pushCommands } from "./push";

/**
 * Socket.io messages from a tab to the bridge. Commands that change state carry a
 * client-generated `commandId` so a replay of a buffered emit after a reconnect is
 * recognised and answered with the first result instead of acting twice.
 */
const CommandId = z.string().min(8).max(64);
const SessionId = z.string().min(1).max(64);

export const clientCommands = {
  // The UI's command() stamps every command with a commandId; reads accept and ignore it.
  // afterCreatedAt: when the tab's last event was appended; a log that holds another event at
  // that seq (lost by a crash, then reused) resets the tab instead of leaving a silent gap.
  "session.subscribe": z
    .object({
      commandId: CommandId.optional(),
      sessionId: SessionId,
      afterSeq: z.number().int().min(0).optional(),
      afterCreatedAt: z.string().max(40).optional(),
    })
    .strict(),
  "session.unsubscribe": z.object({ commandId: CommandId.optional(), sessionId: SessionId }).strict(),
  "turn.prompt": z
    .object({
      commandId: CommandId,
      sessionId: SessionId,
      text: z.string().min(1).max(200_000),
      reasoning: z.enum(["on", "off"]).optional(),
      /** Pasted or dropped images for models that take them (limits in ./images). */
      images: PromptImages.optional(),
    })
    .strict(),
  "turn.cancel": z.object({ commandId: CommandId, sessionId: SessionId }).strict(),
  ...approvalCommands,
  /** A message for the running turn, injected before its next step (starts a turn if none runs). */
  "turn.steer": z.object({ commandId: CommandId, sessionId: SessionId, text: z.string().min(1).max(200_000) }).strict(),
  /** Summarises older messages now; `focus` says what the summary must keep. */
  "session.compact": z
    .object({ commandId: CommandId, sessionId: SessionId, focus: z.string().max(2_000).optional() })
    .strict(),
  ...presenceCommands,
  ...pushCommands,
} as const;

export const WireError = z.object({
  code: z.string(),
  message: z.string(),
  details: z.unknown().optional(),
  /** A conflict's paths (`merge:conflict`, `merge:dirty`, `checkpoint:conflict`), also in `details.paths`. */
  paths: z.array(z.string()).optional(),
});
export type WireError = z.infer<typeof WireError>;

/** Every command is acknowledged with one of these; the tab parses it with this schema. */
export const Ack = z.discriminatedUnion("ok", [
  z.object({ ok: z.literal(true), data: z.unknown() }),
  z.object({ ok: z.literal(false), error: WireError }),
]);
export type Ack<T = unknown> = { ok: true; data: T } | { ok: false; error: WireError };

/**
 * `snapshot`: a new tab's starting state (the log folded up to `snapshot.state.lastSeq`), then
 * `events` after it. `reset`: the tab's state is not a prefix of this log (e.g. a crash lost
 * events it had seen); it must drop it and start from this answer.
 */
export const SubscribeResult = z.object({
  events: z.array(EventEnvelope),
  lastSeq: z.number().int(),
  snapshot: TranscriptSnapshot.optional(),
  reset: z.boolean().optional(),
});

/**
 * SubscribeResult as the tab reads it: each event is checked on its own
 * (components/session/checked-events.ts), so one that drifted is left out and reported rather than
 * failing the whole subscribe; the snapshot is checked as deep as TranscriptSnapshot goes.
 */
export const SubscribeReply = SubscribeResult.extend({
  events: z.array(z.unknown()),
  snapshot: z
    .custom<TranscriptSnapshot>((value) => TranscriptSnapshot.safeParse(value).success, "a transcript snapshot")
    .optional(),
});

export type SubscribeResult = {
  events: EventEnvelope[];
  lastSeq: number;
  snapshot?: TranscriptSnapshot;
  reset?: boolean;
};
