import fs from "node:fs/promises";
import path from "node:path";
import ignore, { type Ignore } from "ignore";

/** Folders nobody wants in a tree or a mention list: they are big, generated or tool-private. */
export const HEAVY_DIRS = new Set([
  ".git",
  "node_modules",
  ".next",
  "dist",
  "build",
  "out",
  "target",
  "coverage",
  "__pycache__",
  ".venv",
  "venv",
  ".tox",
  ".cache",
  ".turbo",
  ".gradle",
  ".idea",
  ".mypy_cache",
  ".pytest_cache",
]);

/**
 * The workspace's ignore rules: heavy folders plus every .gitignore from the
 * root down to a directory, each applied relative to its own folder.
 */
export class IgnoreRules {
  private readonly byDir = new Map<string, { mtimeMs: number; rules: Ignore | null }>();

  constructor(private readonly root: string) {}

  /** True when `rel` (posix, relative to the root) is hidden. */
  async ignored(rel: string, isDir: boolean): Promise<boolean> {
    const parts = rel.split("/");
    if (parts.some((part, i) => HEAVY_DIRS.has(part) && (i < parts.length - 1 || isDir))) return true;
    for (let depth = 0; depth < parts.length; depth++) {
      const dir = parts.slice(0, depth).join("/");
      const rules = await this.rulesOf(dir);
      if (!rules) continue;
      const sub = parts.slice(depth).join("/") + (isDir ? "/" : "");
      if (rules.ignores(sub)) return true;
    }
    return false;
  }

  private async rulesOf(dir: string): Promise<Ignore | null> {
    const file = path.join(this.root, dir, ".gitignore");
    const stat = await fs.stat(file).catch(() => null);
    const mtimeMs = stat?.mtimeMs ?? -1;
    const cached = this.byDir.get(dir);
    if (cached && cached.mtimeMs === mtimeMs) return cached.rules;
    const text = stat ? await fs.readFile(file, "utf8").catch(() => "") : "";
    const rules = text ? ignore().add(text) : null;
    this.byDir.set(dir, { mtimeMs, rules });
    return rules;
  }
}
