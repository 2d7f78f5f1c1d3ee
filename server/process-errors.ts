/**
 * One policy for errors nothing caught, for the whole process (bridge, `worldline acp`,
 * `worldline run`): log them with what they were, keep serving, and count them so
 * `/api/v1/health` shows a bridge that is limping. Node's default (print and exit on an
 * uncaught exception; exit on an unhandled rejection since Node 15) would take every
 * session, terminal and running turn down for one bug in one request's code path.
 */

const counts = { unhandledRejections: 0, uncaughtExceptions: 0 };
let installed = false;

export interface ProcessErrorCounts {
  unhandledRejections: number;
  uncaughtExceptions: number;
}

export function processErrorCounts(): ProcessErrorCounts {
  return { ...counts };
}

/** Installs the policy once per process; later calls do nothing. */
export function installProcessErrorPolicy(): void {
  if (installed) return;
  installed = true;
  process.on("unhandledRejection", (reason) => {
    counts.unhandledRejections += 1;
    console.error(`[worldline] unhandled rejection #${counts.unhandledRejections} (still serving):`, describe(reason));
  });
  process.on("uncaughtException", (error, origin) => {
    counts.uncaughtExceptions += 1;
    console.error(
      `[worldline] uncaught exception #${counts.uncaughtExceptions} from ${origin} (still serving):`,
      describe(error),
    );
  });
}

function describe(value: unknown): string {
  if (value instanceof Error) return value.stack ?? `${value.name}: ${value.message}`;
  try {
    return typeof value === "string" ? value : JSON.stringify(value);
  } catch {
    // circular or otherwise not serialisable
    return String(value);
  }
}
