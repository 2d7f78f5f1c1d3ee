import { EventEnvelope, parseSessionEvent } from "../../server/protocol";

/**
 * Events from the bridge checked against the protocol's schemas, always (production too): a
 * schema drift between bridge and page fails loudly instead of rendering garbage, and a parse
 * per event is cheap next to rendering it.
 */

/** The events that match the protocol; each one that does not is reported and left out. */
export function checkedEvents(
  events: readonly unknown[],
  report: (message: string) => void = (message) => console.error(message),
): EventEnvelope[] {
  const valid: EventEnvelope[] = [];
  for (const raw of events) {
    const envelope = EventEnvelope.safeParse(raw);
    try {
      if (!envelope.success) throw envelope.error;
      parseSessionEvent(envelope.data);
      valid.push(raw as EventEnvelope);
    } catch (error) {
      const seen = raw as { seq?: unknown; type?: unknown };
      report(
        `[worldline] event #${String(seen?.seq)} (${String(seen?.type)}) does not match the protocol: ` +
          (error instanceof Error ? error.message : String(error)),
      );
    }
  }
  return valid;
}
