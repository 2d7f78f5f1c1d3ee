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

/** For `.catch`: null when the path does not exist, the error itself otherwise. */
export function nullIfNotFound(error: unknown): null {
  if (isNotFound(error)) return null;
  throw error;
}

export function statOrNull(path: string): Promise<Stats | null> {
  return fs.stat(path).catch(nullIfNotFound);
}

/** Like statOrNull, for the link itself rather than what it points to. */
export function lstatOrNull(path: string): Promise<Stats | null> {
  return fs.lstat(path).catch(nullIfNotFound);
}

/** The file's text, or null when it does not exist. */
export function readTextOrNull(path: string): Promise<string | null> {
  return fs.readFile(path, "utf8").catch(nullIfNotFound);
}
