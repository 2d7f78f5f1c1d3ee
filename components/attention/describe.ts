import type { EventPayload } from "@/server/protocol";

/** What a notification says about a request: the command, or the file, or the description. */
export function approvalSubject(approval: { tool: string; args: unknown; description: string; kind?: string }): string {
  if (approval.kind === "password") return `sudo password for: ${approval.description}`;
  const args = approval.args && typeof approval.args === "object" ? (approval.args as Record<string, unknown>) : {};
  for (const key of ["command", "path", "file_path", "url"]) {
    const value = args[key];
    if (typeof value === "string" && value) return `${approval.tool}: ${clip(value)}`;
  }
  return clip(approval.description);
}

/** How a turn's end reads in a notification; null for endings the person caused (cancel, reject). */
export function turnEnding(
  payload: EventPayload<"turn.completed">,
  lastAnswer: string | undefined,
): { failed: boolean; body: string } | null {
  switch (payload.outcome) {
    case "completed":
      return { failed: false, body: clip(lastAnswer?.trim() || "The agent finished.") };
    case "cancelled":
    case "rejected":
      return null;
    case "max_steps":
      return { failed: true, body: "Stopped at the step limit." };
    case "loop_detected":
      return { failed: true, body: "Stopped: the agent repeated the same call." };
    case "interrupted":
      return { failed: true, body: "The turn was interrupted." };
    default:
      return { failed: true, body: clip(payload.message ?? "The turn failed.") };
  }
}

function clip(text: string, max = 140): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
