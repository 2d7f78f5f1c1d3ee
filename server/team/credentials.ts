import { randomUUID } from "node:crypto";
import * as z from "zod";
import type { RedisLink } from "../bus";
import { CredentialEnded, type Credentials } from "../people";

/**
 * Team mode: a credential that ends on one bridge ends on all of them (SECURITY.md, "Sockets follow
 * their credential"). Each event is published on the deployment's `<prefix>:credentials` channel;
 * every other bridge parses it and tells its own notifier, whose socket listener closes the sockets
 * that came with it there. A message that does not parse is dropped with one line in the log.
 */
const CredentialMessage = z.object({ from: z.string().min(1), event: CredentialEnded });

export async function relayCredentials(link: RedisLink, credentials: Credentials): Promise<() => void> {
  const me = randomUUID();
  const channel = `${link.prefix}:credentials`;
  const onMessage = (from: string, raw: string) => {
    if (from !== channel) return;
    const message = parse(raw);
    if (message && message.from !== me) credentials.heard(message.event);
  };
  link.sub.on("message", onMessage);
  await link.sub.subscribe(channel);
  const stopPublishing = credentials.publishTo((event) => {
    link.pub.publish(channel, JSON.stringify({ from: me, event })).catch((error: unknown) => {
      // Redis is down: sockets on the other bridges keep the credential until they reconnect (SECURITY.md says so).
      console.error(
        "[worldline] publishing a credential's end failed:",
        error instanceof Error ? error.message : error,
      );
    });
  });
  return () => {
    stopPublishing();
    link.sub.off("message", onMessage);
  };
}

function parse(raw: string): z.infer<typeof CredentialMessage> | null {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    json = undefined; // Not JSON: reported below like any other malformed message.
  }
  const parsed = CredentialMessage.safeParse(json);
  if (parsed.success) return parsed.data;
  console.error("[worldline] ignored a malformed credential message from the bus");
  return null;
}
