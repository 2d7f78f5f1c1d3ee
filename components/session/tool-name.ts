import type { PendingApproval, TranscriptItem } from "@/server/protocol";

type ToolItem = Extract<TranscriptItem, { kind: "tool" }>;

/** Argument keys that say what a call is about, most telling first. */
const SUBJECT_KEYS = ["command", "path", "file_path", "file", "pattern", "url", "description", "query"];
/** A spoken name stays short: a long command line is cut here. */
const MAX_SUBJECT_CHARS = 120;

const STATE_WORDS: Record<ToolItem["state"], string> = {
  pending: "pending",
  waiting_approval: "needs approval",
  running: "running",
  completed: "done",
  error: "failed",
};

/** The argument that names what a tool call works on (a command, a path, a pattern), if any. */
export function toolSubject(args: unknown): string | null {
  if (!args || typeof args !== "object") return null;
  const record = args as Record<string, unknown>;
  for (const key of SUBJECT_KEYS) if (typeof record[key] === "string") return record[key] as string;
  return null;
}

/** The exit code a shell call reported at the end of its output (`[exit code: N]`), if any. */
export function exitCodeOf(output: string | undefined): number | null {
  const match = output ? /\[exit code: (-?\d+)\]\s*$/.exec(output) : null;
  return match ? Number(match[1]) : null;
}

/**
 * What a screen reader says for a tool card: tool, subject, how its approval went, how it ended
 * ("shell: npm test, approved, exit 0").
 */
export function toolCardName(item: ToolItem, approval?: PendingApproval): string {
  const subject = toolSubject(item.args);
  const parts = [subject ? `${item.name}: ${clip(subject)}` : item.name];
  if (item.state === "waiting_approval")
    parts.push(approval ? `needs approval, ${approval.riskLevel} risk` : "needs approval");
  else if (item.approvalStatus) parts.push(item.approvalStatus);
  const exit = item.state === "completed" || item.state === "error" ? exitCodeOf(item.output) : null;
  if (exit !== null) parts.push(`exit ${exit}`);
  else if (item.state !== "waiting_approval") parts.push(STATE_WORDS[item.state]);
  return parts.join(", ");
}

function clip(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > MAX_SUBJECT_CHARS ? `${line.slice(0, MAX_SUBJECT_CHARS - 1)}…` : line;
}
