import * as z from "zod";

/** Previews and ports: the API's shapes, the socket's, and the Preview panel's postMessage. */

export const SessionPort = z.object({
  port: z.number().int().min(1).max(65_535),
  pid: z.number().int(),
  command: z.string(),
  /** The preview address, `http://p<port>-<session>.localhost:<bridge port>/`. */
  url: z.string(),
});
export type SessionPort = z.infer<typeof SessionPort>;
export const SessionPorts = z.array(SessionPort);

export const PortsWatchCommand = z.object({ sessionId: z.string().min(1).max(200) }).strict();
export const PortsChanged = z.object({ sessionId: z.string(), ports: SessionPorts });
export type PortsChanged = z.infer<typeof PortsChanged>;

/** `GET /api/v1/sessions/:id/preview/authorize?port=&path=`: the IDE's side of a preview's sign-in. */
export const PreviewAuthorizeQuery = z.object({
  port: z.coerce.number().int().min(1).max(65_535),
  path: z.string().max(4096).default("/"),
});

/** `POST /api/v1/sessions/:id/preview/capture`: a picked element's screenshot, taken by the bridge's browser. */
export const PreviewCaptureBody = z
  .object({
    port: z.number().int().min(1).max(65_535),
    path: z.string().startsWith("/").max(4096),
    selector: z.string().min(1).max(1000),
    width: z.number().int().min(200).max(3000),
    height: z.number().int().min(200).max(3000),
  })
  .strict();
export type PreviewCaptureBody = z.infer<typeof PreviewCaptureBody>;
export const PreviewCapture = z.object({ mediaType: z.literal("image/png"), dataBase64: z.string() });
export type PreviewCapture = z.infer<typeof PreviewCapture>;

const Rect = z.object({ x: z.number(), y: z.number(), width: z.number(), height: z.number() });

/** What the picker on a preview origin posts to the panel (server/preview/picker.ts). */
export const PreviewFrameMessage = z.discriminatedUnion("type", [
  z.object({ worldline: z.literal("preview"), type: z.literal("location"), path: z.string().max(4096) }),
  z.object({
    worldline: z.literal("preview"),
    type: z.literal("picked"),
    selector: z.string().max(2000),
    text: z.string().max(2000),
    rect: Rect,
    viewport: z.object({ width: z.number(), height: z.number() }),
    path: z.string().max(4096),
  }),
  z.object({ worldline: z.literal("preview"), type: z.literal("pick-cancelled") }),
]);
export type PreviewFrameMessage = z.infer<typeof PreviewFrameMessage>;
