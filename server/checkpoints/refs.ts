import { readFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * The commit a ref points at, read from the shadow repository's files instead of asking git:
 * a loose ref file (git replaces it atomically through a lock file and a rename), else the
 * packed-refs file (after `gc` packed it). Undefined when the ref does not exist yet.
 * Our shadow repositories always use the files ref backend (no global config reaches git).
 */
export async function readRef(gitDir: string, ref: string): Promise<string | undefined> {
  const loose = await readOrUndefined(join(gitDir, ref));
  if (loose !== undefined) {
    const value = loose.trim();
    if (/^[0-9a-f]{40,64}$/.test(value)) return value;
  }
  const packed = await readOrUndefined(join(gitDir, "packed-refs"));
  for (const line of packed?.split("\n") ?? []) {
    const space = line.indexOf(" ");
    if (space > 0 && line.slice(space + 1) === ref && !line.startsWith("#") && !line.startsWith("^"))
      return line.slice(0, space);
  }
  return undefined;
}

async function readOrUndefined(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch {
    return undefined;
  }
}
