import http from "node:http";
import https from "node:https";
import type { VapidKeys } from "./vapid";

/** How long a push notice is worth keeping at the push service for an offline device. */
const PUSH_TTL_SECONDS = 24 * 3600;

export interface PushTarget {
  endpoint: string;
  p256dh: string;
  auth: string;
}

/** What became of one attempt: delivered, the subscription is gone (404/410), worth retrying, or refused for good. */
export type PushResult =
  | { kind: "sent" }
  | { kind: "gone"; status: number }
  | { kind: "retry"; reason: string }
  | { kind: "refused"; status: number };

/**
 * One push: web-push encrypts (RFC 8291, aes128gcm) and signs (VAPID); the request is sent here,
 * so an http endpoint on loopback (a push service a test runs) works like an https one.
 */
export async function sendPush(
  target: PushTarget,
  payload: string,
  vapid: VapidKeys & { subject: string },
  timeoutMs: number,
): Promise<PushResult> {
  // Loaded with the first push (cached by the module system after it): most starts send none.
  const { default: webpush } = await import("web-push");
  const details = webpush.generateRequestDetails(
    { endpoint: target.endpoint, keys: { p256dh: target.p256dh, auth: target.auth } },
    payload,
    { vapidDetails: vapid, TTL: PUSH_TTL_SECONDS, urgency: "high" },
  );
  const status = await post(details.endpoint, details.headers, details.body, timeoutMs).catch(
    (error: Error) => error.message,
  );
  if (typeof status === "string") return { kind: "retry", reason: status };
  if (status >= 200 && status < 300) return { kind: "sent" };
  if (status === 404 || status === 410) return { kind: "gone", status };
  if (status === 429 || status >= 500) return { kind: "retry", reason: `HTTP ${status}` };
  return { kind: "refused", status };
}

/** POSTs a body and resolves with the status; rejects on a network error or after `timeoutMs`. */
export function post(
  endpoint: string,
  headers: Record<string, string | number>,
  body: Buffer | string | null,
  timeoutMs: number,
): Promise<number> {
  const url = new URL(endpoint);
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(url, { method: "POST", headers, timeout: timeoutMs }, (response) => {
      response.resume();
      response.once("end", () => resolve(response.statusCode ?? 0));
      response.once("error", reject);
    });
    request.once("timeout", () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.once("error", reject);
    request.end(body ?? undefined);
  });
}
