import type { EventEnvelope } from "../protocol";

/** A card's last-activity line is a glance: longer ones are cut here. */
const ACTIVITY_MAX_CHARS = 80;

/**
 * The last thing the agent did, in one line, from one event of its log ("ran npm test",
 * "edited src/a.ts"); null for events that say nothing a card should show.
 */
function activityOf(event: EventEnvelope): string | null {
  switch (event.type) {
    case "tool.call":
      return cut(describeCall(event.payload.name, event.payload.args));
    case "turn.started":
      return cut(`started: ${event.payload.prompt.split("\n")[0]}`);
    case "approval.requested":
      return cut(`waits for approval: ${event.payload.tool}`);
    case "turn.completed":
      return event.payload.outcome === "error" ? "stopped with an error" : null;
    case "notice":
      return event.payload.level === "info" ? null : cut(event.payload.text);
    default:
      return null;
  }
}

/** A session's last-activity line, and the call that waits for approval (its line once allowed). */
export interface Activity {
  line: string | null;
  asked: { tool: string; line: string } | null;
}

export const NO_ACTIVITY: Activity = { line: null, asked: null };

/**
 * The activity after `event`: a decided approval replaces "waits for approval" with what the call
 * did once allowed, or says it did not run; other events as `activityOf` says.
 */
export function nextActivity(activity: Activity, event: EventEnvelope): Activity {
  if (event.type === "approval.requested") {
    const asked = { tool: event.payload.tool, line: cut(describeCall(event.payload.tool, event.payload.args)) };
    return { line: activityOf(event), asked };
  }
  if (event.type === "approval.decided" && activity.asked) {
    const { tool, line } = activity.asked;
    return {
      line: event.payload.status === "approved" ? line : cut(`${tool} not run (${event.payload.status})`),
      asked: null,
    };
  }
  const line = activityOf(event);
  return line === null ? activity : { ...activity, line };
}

function describeCall(name: string, args: unknown): string {
  const record = typeof args === "object" && args !== null ? (args as Record<string, unknown>) : {};
  const text = (key: string) => (typeof record[key] === "string" ? (record[key] as string) : "");
  switch (name) {
    case "shell":
      return `ran ${text("command").split("\n")[0]}`;
    case "write_file":
    case "str_replace":
      return `edited ${text("path")}`;
    case "read_file":
      return `read ${text("path")}`;
    case "grep":
    case "glob":
      return `searched ${text("pattern")}`;
    default:
      return `used ${name}`;
  }
}

function cut(line: string): string {
  const trimmed = line.trim();
  return trimmed.length > ACTIVITY_MAX_CHARS ? `${trimmed.slice(0, ACTIVITY_MAX_CHARS - 1)}…` : trimmed;
}
