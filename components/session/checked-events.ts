import { parseSessionEvent, type EventEnvelope } from "../../server/protocol";

/**
 * Events from the bridge checked against the protocol's schemas (parseSessionEvent) in
 * development and tests, so a schema drift between bridge and UI fails loudly instead of
 * rendering garbage. Production trusts the bridge it was built with: the check costs a parse
 * per event on long sessions.
 */
const VALIDATE = process.env.NODE_ENV !== "production" || process.env.NEXT_PUBLIC_WORLDLINE_VALIDATE_EVENTS === "1";

/** The events that match the protocol; each one that does not is reported and left out. */
export function checkedEvents(
  events: EventEnvelope[],
  report: (message: string) => void = (message) => console.error(message),
  validate = VALIDATE,
): EventEnvelope[] {
  if (!validate) return events;
  return events.filter((event) => {
    try {
      parseSessionEvent({ type: event.type, payload: event.payload });
      return true;
    } catch (error) {
      report(
        `[worldline] event #${event.seq} (${String(event.type)}) does not match the protocol: ` +
          (error instanceof Error ? error.message : String(error)),
      );
      return false;
    }
  });
}
