import type { TranscriptState } from "@/server/protocol";
import { toolSubject } from "./tool-name";

/** A spoken answer stays short; the transcript holds the rest. */
const MAX_SPOKEN_CHARS = 400;

/**
 * What a screen reader should hear when a session goes from `before` to `after`: an answer once
 * it is complete (never token by token), an approval that starts waiting, a turn that ends, an
 * error. Each only once: the caller passes every state change through here exactly once.
 */
export function announcementsBetween(before: TranscriptState, after: TranscriptState): string[] {
  const said: string[] = [];
  const was = new Map(before.items.map((item) => [item.id, item]));
  for (const item of after.items) {
    const old = was.get(item.id);
    if (item.kind === "assistant" && item.done && item.text.trim() && !(old?.kind === "assistant" && old.done))
      said.push(`Agent: ${spoken(item.text)}`);
    if (item.kind === "notice" && item.level === "error" && !old) said.push(`Error: ${spoken(item.text)}`);
  }
  for (const [id, approval] of Object.entries(after.approvals)) {
    if (before.approvals[id]) continue;
    const subject = toolSubject(approval.args);
    const what =
      approval.kind === "password" ? "a sudo password" : subject ? `${approval.tool}: ${subject}` : approval.tool;
    said.push(`Approval needed, ${approval.riskLevel} risk: ${spoken(what)}`);
  }
  if (before.running && !after.running) said.push("Turn finished.");
  return said;
}

/** Markdown read aloud: no code fences, emphasis marks or link targets, one line. */
function spoken(text: string): string {
  const plain = text
    .replace(/```[\s\S]*?```/g, " (code) ")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[*_`#>]+/g, "")
    .replace(/\s+/g, " ")
    .trim();
  return plain.length > MAX_SPOKEN_CHARS ? `${plain.slice(0, MAX_SPOKEN_CHARS - 1)}…` : plain;
}
