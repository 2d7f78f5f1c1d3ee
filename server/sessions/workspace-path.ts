import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { WorldlineError } from "../errors";

/** Resolves a user-typed folder (absolute, or starting with ~) to its real path; it must be an existing directory. */
export async function resolveWorkspacePath(input: string): Promise<string> {
  if (input.includes("\0")) throw new WorldlineError("workspace:invalid", "The workspace path contains a NUL byte.");
  const expanded = input === "~" || input.startsWith("~/") ? path.join(os.homedir(), input.slice(1)) : input;
  if (!path.isAbsolute(expanded)) {
    throw new WorldlineError("workspace:invalid", `The workspace must be an absolute path, got "${input}".`);
  }
  let real: string;
  try {
    real = await fs.realpath(expanded);
  } catch {
    throw new WorldlineError("workspace:invalid", `The folder "${input}" does not exist.`);
  }
  const stat = await fs.stat(real);
  if (!stat.isDirectory()) throw new WorldlineError("workspace:invalid", `"${input}" is a file, not a folder.`);
  return real;
}

/** The sub-folders of a directory, for the folder picker. Hidden folders last. */
export async function listDirectories(
  input?: string,
): Promise<{ path: string; parent: string | null; entries: { name: string; path: string }[] }> {
  const dir = await resolveWorkspacePath(input || os.homedir());
  const entries = await fs.readdir(dir, { withFileTypes: true });
  const folders = entries
    .filter((entry) => entry.isDirectory() || entry.isSymbolicLink())
    .map((entry) => ({ name: entry.name, path: path.join(dir, entry.name) }))
    .sort((a, b) => Number(a.name.startsWith(".")) - Number(b.name.startsWith(".")) || a.name.localeCompare(b.name));
  const parent = path.dirname(dir);
  return { path: dir, parent: parent === dir ? null : parent, entries: folders.slice(0, MAX_PICKER_ENTRIES) };
}

/** A folder picker only needs the first screenfuls; huge folders stay responsive. */
const MAX_PICKER_ENTRIES = 500;
