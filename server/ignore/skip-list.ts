import ignore from "ignore";

/**
 * The one skip list of the workspace, as gitignore patterns: never shown in the file tree,
 * never searched by glob/grep, never snapshotted by checkpoints, whatever the workspace's
 * .gitignore files say. Version-control metadata, dependency trees, build output, caches and
 * virtualenvs are big, generated or tool-private, and rebuilding them beats restoring them.
 * `out/` is left in: the name is too generic (checkpoints must capture a hand-written out/).
 */
export const SKIP_PATTERNS: readonly string[] = [
  ".git/",
  ".hg/",
  ".svn/",
  "node_modules/",
  ".next/",
  ".nuxt/",
  ".svelte-kit/",
  ".turbo/",
  ".parcel-cache/",
  "dist/",
  "build/",
  "target/",
  "coverage/",
  ".cache/",
  ".venv/",
  "venv/",
  "__pycache__/",
  "*.pyc",
  ".mypy_cache/",
  ".pytest_cache/",
  ".ruff_cache/",
  ".tox/",
  ".gradle/",
  ".idea/",
  ".terraform/",
  ".DS_Store",
  ".worldline/cache/",
];

const skipMatcher = ignore().add([...SKIP_PATTERNS]);

/** True when `rel` (posix, relative to the workspace root, non-empty) falls under the skip list. */
export function isSkipped(rel: string, isDir: boolean): boolean {
  return skipMatcher.ignores(isDir ? `${rel}/` : rel);
}

/** The skip list as ripgrep `--glob` exclusions (a folder pattern loses its trailing `/`). */
export function skipGlobsForRipgrep(): string[] {
  return SKIP_PATTERNS.map((pattern) => `!${pattern.replace(/\/$/, "")}`);
}
