import * as z from "zod";

/** Web Push and notices: the subscription a browser hands over, and what a push carries. */

/** Longest endpoint kept: push services' URLs are a few hundred characters; more is not a push service. */
export const MAX_PUSH_ENDPOINT_LENGTH = 1024;

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** https, or http on loopback (a push service a test runs on this machine). */
export function pushEndpointAllowed(endpoint: string): boolean {
  try {
    const url = new URL(endpoint);
    if (url.username || url.password) return false;
    return url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK.has(url.hostname));
  } catch {
    return false;
  }
}

const base64url = (bytes: number, what: string) =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]+={0,2}$/, `${what} must be base64url`)
    .refine((value) => decodedLength(value) === bytes, `${what} must be ${bytes} bytes`);

/** Bytes a base64url text decodes to (this module runs in browsers too: no Buffer). */
function decodedLength(value: string): number {
  const digits = value.replace(/=+$/, "").length;
  return digits % 4 === 1 ? -1 : Math.floor((digits * 3) / 4);
}

/** A browser's `PushSubscription.toJSON()`, plus the name the person gives this device. */
export const PushSubscriptionBody = z
  .object({
    endpoint: z
      .string()
      .max(MAX_PUSH_ENDPOINT_LENGTH, `the endpoint is longer than ${MAX_PUSH_ENDPOINT_LENGTH} characters`)
      .refine(pushEndpointAllowed, "the endpoint must be an https URL (http only on loopback)"),
    expirationTime: z.number().nullable().optional(),
    keys: z.object({
      /** The browser's P-256 public key, uncompressed (65 bytes). */
      p256dh: base64url(65, "keys.p256dh"),
      /** The shared authentication secret (16 bytes). */
      auth: base64url(16, "keys.auth"),
    }),
    device: z.string().trim().min(1).max(100).default("This device"),
  })
  .strict();
export type PushSubscriptionBody = z.infer<typeof PushSubscriptionBody>;

export const DeletePushSubscriptionBody = z
  .object({ endpoint: z.string().min(1).max(MAX_PUSH_ENDPOINT_LENGTH) })
  .strict();

export const PushKey = z.object({ public_key: z.string() });
export type PushKey = z.infer<typeof PushKey>;

/** One device that gets pushes (never its keys). */
export const PushDevice = z.object({
  id: z.string(),
  device: z.string(),
  endpoint: z.string(),
  created_at: z.string(),
});
export type PushDevice = z.infer<typeof PushDevice>;
export const PushDevices = z.array(PushDevice);

export const NoticeType = z.enum([
  "approval.requested",
  "password.requested",
  "budget.requested",
  "turn.completed",
  "turn.failed",
  "routine.completed",
  "routine.failed",
]);
export type NoticeType = z.infer<typeof NoticeType>;

/** What a push (and the webhook) carries: never file contents, secrets or a long-lived token. */
export const Notice = z.object({
  type: NoticeType,
  session_id: z.string(),
  title: z.string(),
  summary: z.string(),
  approval_id: z.string().optional(),
  tool: z.string().optional(),
  /** Single use, bound to `approval_id`, valid 15 minutes (POST /api/v1/approvals/:id as Bearer). */
  action_token: z.string().optional(),
  /** Where Open lands when it is not the session's page (a routine run that never got a session: `/routines`). */
  url: z.string().startsWith("/").optional(),
});
export type Notice = z.infer<typeof Notice>;

/** A tab says whether it shows the session in a focused, visible window: then nobody pushes it. */
export const pushCommands = {
  "presence.focus": z
    .object({
      commandId: z.string().min(8).max(64).optional(),
      sessionId: z.string().min(1).max(64),
      focused: z.boolean(),
    })
    .strict(),
} as const;
