import path from "node:path";
import type { ResolvedPath } from "../host";
import type { ApprovalNeed } from "./types";

/**
 * The approval need of a file tool. Reads inside the workspace need nothing,
 * writes inside ask (yolo may approve), anything outside or sensitive is
 * `always`: only a human or an explicit rule approves it.
 */
export function pathApproval(
  resolved: ResolvedPath,
  access: "read" | "write",
  what: string,
  diff?: string,
): ApprovalNeed {
  const subject = resolved.display;
  const scope = resolved.inside ? scopeForInside(resolved.display) : resolved.real;
  if (!resolved.inside) {
    return {
      level: "always",
      subject,
      scope,
      description: `${what} outside the workspace: ${resolved.real}`,
      risk: "high",
      diff,
    };
  }
  if (resolved.sensitive) {
    return {
      level: "always",
      subject,
      scope: subject,
      description: `${what} a sensitive file (${resolved.sensitive}): ${subject}`,
      risk: "high",
      diff,
    };
  }
  if (access === "write" && resolved.hardLinks) {
    const why = `it has ${resolved.hardLinks} hard links, another may be outside the workspace`;
    return { level: "always", subject, scope: subject, description: `${what} ${subject} (${why})`, risk: "high", diff };
  }
  if (access === "read") return { level: "none", subject, scope, description: `${what} ${subject}`, risk: "none" };
  return { level: "ask", subject, scope, description: `${what} ${subject}`, risk: "medium", diff };
}

/** "Allow for this session" on an edit of `src/a/b.ts` covers `src/a/**`. */
function scopeForInside(relative: string): string {
  const dir = path.dirname(relative);
  return dir === "." ? relative : `${dir.split(path.sep).join("/")}/**`;
}
