import { promises as fs } from "node:fs";
import path from "node:path";
import picomatch from "picomatch";
import { sensitiveReason } from "./paths";

/** Folders never worth walking into for search, whatever .gitignore says. */
const ALWAYS_SKIPPED_DIRS = new Set([".git", "node_modules", ".hg", ".svn"]);
/** Files visited at most per walk, so a search of a huge tree ends. */
export const WALK_MAX_FILES = 50_000;

export interface WalkedFile {
  /** Absolute path. */
  absolute: string;
  /** Relative to the walk root, with `/` separators. */
  relative: string;
}

interface IgnoreRule {
  base: string;
  negated: boolean;
  dirOnly: boolean;
  match: (relative: string) => boolean;
}

/**
 * Files under `root` in sorted order, skipping `.git`/`node_modules`, files
 * matched by `.gitignore`s (a common subset of gitignore syntax: globs,
 * `/`-anchoring, trailing `/`, `!`), and sensitive files (`.env`, keys), which
 * are read only through read_file and its approval.
 */
export async function* walkFiles(root: string, signal?: AbortSignal): AsyncGenerator<WalkedFile> {
  let visited = 0;
  async function* visit(dir: string, rules: IgnoreRule[]): AsyncGenerator<WalkedFile> {
    if (signal?.aborted) return;
    const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
    const local = await readGitignore(dir);
    const active = local.length > 0 ? [...rules, ...local] : rules;
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const absolute = path.join(dir, entry.name);
      const relative = toPosix(path.relative(root, absolute));
      const isDir = entry.isDirectory();
      if (isDir && ALWAYS_SKIPPED_DIRS.has(entry.name)) continue;
      if (isIgnored(active, absolute, isDir)) continue;
      if (isDir) {
        yield* visit(absolute, active);
      } else if (entry.isFile() && !sensitiveReason(absolute)) {
        if (++visited > WALK_MAX_FILES) return;
        yield { absolute, relative };
      }
    }
  }
  yield* visit(root, []);
}

async function readGitignore(dir: string): Promise<IgnoreRule[]> {
  const text = await fs.readFile(path.join(dir, ".gitignore"), "utf8").catch(() => "");
  const rules: IgnoreRule[] = [];
  for (const rawLine of text.split(/\r?\n/)) {
    let line = rawLine.trim();
    if (line === "" || line.startsWith("#")) continue;
    const negated = line.startsWith("!");
    if (negated) line = line.slice(1);
    const dirOnly = line.endsWith("/");
    if (dirOnly) line = line.slice(0, -1);
    const anchored = line.includes("/");
    if (line.startsWith("/")) line = line.slice(1);
    const glob = anchored ? line : `**/${line}`;
    const matcher = picomatch(glob, { dot: true });
    rules.push({ base: dir, negated, dirOnly, match: (relative) => matcher(relative) || matcher(`${relative}/`) });
  }
  return rules;
}

function isIgnored(rules: IgnoreRule[], absolute: string, isDir: boolean): boolean {
  let ignored = false;
  for (const rule of rules) {
    if (rule.dirOnly && !isDir) continue;
    const relative = toPosix(path.relative(rule.base, absolute));
    if (rule.match(relative)) ignored = !rule.negated;
  }
  return ignored;
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
