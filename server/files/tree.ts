import fs from "node:fs/promises";
import path from "node:path";
import type { ProtectedHome } from "../config";
import type { WorkspaceIgnore } from "../ignore";
import { resolveInside } from "./paths";

export interface TreeEntry {
  name: string;
  path: string;
  type: "file" | "dir";
  /** Set when git ignores it (listed only when ignored files are shown). */
  ignored?: boolean;
}

/** A directory listing never returns more than this; a giant folder shows its first entries. */
export const MAX_DIR_ENTRIES = 2_000;

/** Never listed, even with ignored files shown: git's own database. */
const GIT_DIR = ".git";

/**
 * One level of the tree: folders first, then files, names sorted. What git ignores (in a
 * repository git's own answer, elsewhere the .gitignore files) is hidden (or, with `showIgnored`,
 * listed and marked), `.git` always; the heavier skip list of search and checkpoints does not
 * apply here.
 */
export async function listDir(
  root: string,
  rules: WorkspaceIgnore,
  relDir: string,
  showIgnored = false,
  home?: ProtectedHome,
): Promise<{ path: string; entries: TreeEntry[]; truncated: boolean }> {
  const { abs, rel } = await resolveInside(root, relDir, home);
  const dirents = await fs.readdir(abs, { withFileTypes: true });
  const children: { name: string; isDir: boolean }[] = [];
  for (const dirent of dirents) {
    if (dirent.name === GIT_DIR) continue;
    // The bridge's data folder inside a workspace that holds it is not shown.
    if (home?.refuses(path.join(abs, dirent.name), root)) continue;
    const isDir =
      dirent.isDirectory() ||
      (dirent.isSymbolicLink() &&
        (await fs.stat(`${abs}/${dirent.name}`).then(
          (s) => s.isDirectory(),
          () => false, // a dangling link lists as a file
        )));
    children.push({ name: dirent.name, isDir });
  }
  const ignoredNames = await rules.ignoredChildren(rel, children);
  const entries: TreeEntry[] = [];
  for (const { name, isDir } of children) {
    const ignored = ignoredNames.has(name);
    if (ignored && !showIgnored) continue;
    const childRel = rel ? `${rel}/${name}` : name;
    entries.push({ name, path: childRel, type: isDir ? "dir" : "file", ...(ignored ? { ignored } : {}) });
  }
  entries.sort((a, b) => (a.type === b.type ? a.name.localeCompare(b.name) : a.type === "dir" ? -1 : 1));
  return { path: rel, entries: entries.slice(0, MAX_DIR_ENTRIES), truncated: entries.length > MAX_DIR_ENTRIES };
}

/** Every file of the workspace (ignored ones left out), breadth first, up to `cap`. */
export async function walkFiles(
  root: string,
  rules: WorkspaceIgnore,
  cap: number,
  home?: ProtectedHome,
): Promise<{ files: string[]; truncated: boolean }> {
  const files: string[] = [];
  const queue = [""];
  while (queue.length > 0) {
    const dir = queue.shift() as string;
    const dirents = await fs.readdir(dir ? `${root}/${dir}` : root, { withFileTypes: true }).catch(() => []); // a folder that vanished or is unreadable lists empty
    for (const dirent of dirents) {
      const rel = dir ? `${dir}/${dirent.name}` : dirent.name;
      const isDir = dirent.isDirectory();
      if (home?.refuses(path.join(root, rel), root)) continue;
      if (await rules.ignored(rel, isDir)) continue;
      if (isDir) queue.push(rel);
      else if (dirent.isFile()) {
        files.push(rel);
        if (files.length >= cap) return { files, truncated: true };
      }
    }
  }
  return { files, truncated: false };
}
