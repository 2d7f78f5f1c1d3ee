import { promises as fs } from "node:fs";
import path from "node:path";
import picomatch from "picomatch";
import { WorkspaceIgnore } from "../ignore";
import { sensitiveReason } from "./paths";

/** Files visited at most per walk, so a search of a huge tree ends. */
export const WALK_MAX_FILES = 50_000;

export interface WalkedFile {
  /** Absolute path. */
  absolute: string;
  /** Relative to the walk root, with `/` separators. */
  relative: string;
}

/**
 * Files under `root` in sorted order, leaving out what the workspace ignore engine
 * leaves out (the skip list and `.gitignore`s, as the file tree does) and sensitive
 * files (`.env`, keys), which are read only through read_file and its approval.
 */
export async function* walkFiles(root: string, signal?: AbortSignal): AsyncGenerator<WalkedFile> {
  let visited = 0;
  const rules = new WorkspaceIgnore(root, false);
  async function* visit(dir: string): AsyncGenerator<WalkedFile> {
    if (signal?.aborted) return;
    const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []); // a folder that vanished or is unreadable is walked as empty
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const absolute = path.join(dir, entry.name);
      const relative = toPosix(path.relative(root, absolute));
      const isDir = entry.isDirectory();
      if (await rules.ignored(relative, isDir)) continue;
      if (isDir) {
        yield* visit(absolute);
      } else if (entry.isFile() && !sensitiveReason(absolute)) {
        if (++visited > WALK_MAX_FILES) return;
        yield { absolute, relative };
      }
    }
  }
  yield* visit(root);
}

/**
 * A matcher for include/exclude globs as ripgrep reads them: a glob without
 * `/` matches the file name anywhere, one with `/` matches the path from the
 * search root.
 */
export function globMatcher(globs: readonly string[]): (relative: string) => boolean {
  const matchers = globs.map((glob) => {
    const clean = glob.startsWith("/") ? glob.slice(1) : glob;
    return picomatch(clean, { dot: true, basename: !clean.includes("/") });
  });
  return (relative) => matchers.some((m) => m(relative));
}

export function toPosix(p: string): string {
  return path.sep === "/" ? p : p.split(path.sep).join("/");
}
