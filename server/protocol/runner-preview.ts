import * as z from "zod";

/**
 * The hub ↔ runner operations behind previews of a runner session's dev servers
 * (server/protocol/runner.ts gathers them with the rest):
 *
 * - `ports.list`: the TCP ports that processes under some of the runner's own terminals and
 *   commands listen on, read from the runner's /proc (server/preview/ports.ts, as on a hub);
 * - a byte stream to a port on the runner's loopback: `stream.open` connects, `stream.write`
 *   sends (answered once the runner's socket took the bytes, which is the hub's flow control),
 *   `stream.flow` says how much of it the hub's reader has taken (the runner reads at most
 *   `STREAM_WINDOW_BYTES` ahead of that, which is the runner's flow control), `stream.end` half-closes and
 *   `stream.close` ends it. What the runner reads comes back as `runner.stream_data`, its end
 *   (or failure) as one `runner.stream_end`.
 */

const Id = z.string().min(1).max(64);
const Route = z.string().min(1).max(64);
const Port = z.number().int().min(1).max(65_535);
const Bytes = z.custom<Uint8Array>((value) => value instanceof Uint8Array, "bytes");

/** The most one `stream.write` or `runner.stream_data` carries; the sender splits larger chunks. */
export const STREAM_CHUNK_BYTES = 64 * 1024;
/**
 * What a runner sends of a stream before the hub's reader has taken it: past this it stops reading
 * the port until `stream.flow` reports more taken. A credit, not a pause request, so a hub slow to
 * hear the runner (a busy machine) never receives more than this.
 */
export const STREAM_WINDOW_BYTES = 1024 * 1024;

/** A process a session's processes start under: a terminal's shell (its own session) or a command (its own group). */
const ProcessRootShape = z.object({
  pid: z
    .number()
    .int()
    .min(1)
    .max(2 ** 22),
  kind: z.enum(["terminal", "group"]),
});

const ListeningSocketShape = z.object({ port: Port, pid: z.number().int().min(1), command: z.string().max(200) });

export const PreviewOperations = [
  z.object({ op: z.literal("ports.list"), roots: z.array(ProcessRootShape).max(256) }),
  z.object({ op: z.literal("stream.open"), streamId: Id, port: Port }),
  z.object({
    op: z.literal("stream.write"),
    streamId: Id,
    data: Bytes.refine((data) => data.byteLength <= STREAM_CHUNK_BYTES, "at most 64 KiB"),
  }),
  z.object({ op: z.literal("stream.flow"), streamId: Id, read: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER) }),
  z.object({ op: z.literal("stream.end"), streamId: Id }),
  z.object({ op: z.literal("stream.close"), streamId: Id }),
] as const;

export const PreviewResults = {
  "ports.list": z.array(ListeningSocketShape).max(1024),
  "stream.open": z.null(),
  "stream.write": z.null(),
  "stream.flow": z.null(),
  "stream.end": z.null(),
  "stream.close": z.null(),
};

/** Stream operations a hub may resend after a drop that must not happen twice (server/runner/serve.ts). */
export const PREVIEW_ONCE_ONLY = ["stream.open", "stream.write", "stream.end", "stream.close"] as const;

/** Bytes the runner read from a stream's port. */
export const RunnerStreamData = z
  .object({
    streamId: Id,
    data: Bytes.refine((data) => data.byteLength <= STREAM_CHUNK_BYTES, "at most 64 KiB"),
    route: Route.optional(),
  })
  .strict();

/** The port's side ended (or failed: `error`); nothing more comes for the stream. */
export const RunnerStreamEnd = z
  .object({ streamId: Id, error: z.string().max(1000).optional(), route: Route.optional() })
  .strict();
