import { execFile } from "node:child_process";

/** A marker per changed path, as the tree shows it: M modified, A added, D deleted, U untracked, R renamed, C conflict. */
export type GitMarker = "M" | "A" | "D" | "U" | "R" | "C";

/** `git status` of the workspace, or null when it isn't a git repository (or git is missing). */
export async function gitStatus(root: string): Promise<Record<string, GitMarker> | null> {
  // Porcelain paths are relative to the repository root; the workspace may be a subfolder.
  const prefix = await git(root, ["rev-parse", "--show-prefix"]);
  if (prefix === null) return null;
  const output = await git(root, ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--", "."]);
  return output === null ? null : parsePorcelain(output, prefix.trim());
}

function git(cwd: string, args: string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile("git", args, { cwd, maxBuffer: 8 * 1024 * 1024, timeout: 5_000 }, (error, stdout) =>
      resolve(error ? null : stdout),
    );
  });
}

export function parsePorcelain(output: string, prefix = ""): Record<string, GitMarker> {
  const markers: Record<string, GitMarker> = {};
  const records = output.split("\0");
  for (let i = 0; i < records.length; i++) {
    const record = records[i];
    if (record.length < 4) continue;
    const code = record.slice(0, 2);
    const file = record.slice(3);
    if (code[0] === "R" || code[0] === "C") i++; // the next record is the old name
    if (!file.startsWith(prefix)) continue;
    markers[file.slice(prefix.length)] = markerOf(code);
  }
  return markers;
}

function markerOf(code: string): GitMarker {
  if (code === "??") return "U";
  if (code.includes("U") || code === "AA" || code === "DD") return "C";
  if (code.includes("R")) return "R";
  if (code.includes("A")) return "A";
  if (code.includes("D")) return "D";
  return "M";
}
