import { readFileSync } from "node:fs";
import { join } from "node:path";
import { isNotFound } from "../stat-or-null.ts";

/**
 * The commit a ref points at, read from the shadow repository's files instead of asking git:
 * a loose ref file (git replaces it atomically through a lock file and a rename), else the
 * packed-refs file (after `gc` packed it). Undefined when the ref does not exist yet.
 * Our shadow repositories always use the files ref backend (no global config reaches git).
 * Read synchronously: a file of 41 bytes takes microseconds, a trip through the thread pool
 * waited behind the rest of the event loop at every agent step.
 */
export function readRef(gitDir: string, ref: string): string | undefined {
  const loose = readOrUndefined(join(gitDir, ref));
  if (loose !== undefined) {
    const value = loose.trim();
    if (/^[0-9a-f]{40,64}$/.test(value)) return value;
  }
  const packed = readOrUndefined(join(gitDir, "packed-refs"));
  for (const line of packed?.split("\n") ?? []) {
    const space = line.indexOf(" ");
    if (space > 0 && line.slice(space + 1) === ref && !line.startsWith("#") && !line.startsWith("^"))
      return line.slice(0, space);
  }
  return undefined;
}

function readOrUndefined(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}
