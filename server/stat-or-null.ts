import { promises as fs, type Stats } from "node:fs";

/**
 * "Is it there?" without hiding real failures: a path that does not exist (ENOENT, or ENOTDIR
 * when a parent is a file) is null; anything else — EACCES, EIO, ELOOP — is thrown, so a
 * permission problem is reported as one instead of passing for a missing file.
 */
export function isNotFound(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOENT" || code === "ENOTDIR";
}

export async function statOrNull(path: string): Promise<Stats | null> {
  try {
    return await fs.stat(path);
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

/** Like statOrNull, for the link itself rather than what it points to. */
export async function lstatOrNull(path: string): Promise<Stats | null> {
  try {
    return await fs.lstat(path);
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}
