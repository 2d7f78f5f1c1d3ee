import { execFile } from "node:child_process";

/** A folder's listing waits at most this long for git; past it the .gitignore files decide. */
const CHECK_IGNORE_TIMEOUT_MS = 5_000;
/** Exit codes of `git check-ignore`: 0 some name is ignored, 1 none is. Anything else is a failure. */
const SOME_IGNORED = 0;
const NONE_IGNORED = 1;

/**
 * Which of `names` (entries of the folder `dir`) git itself ignores, or null when `dir` is not in
 * a git work tree (or git is missing or failed). Git's own answer takes in what matching
 * .gitignore files cannot: `.git/info/exclude`, `core.excludesFile`, and that a tracked file (or
 * a folder holding one) is never ignored, whatever pattern it matches. Run in `dir` itself, so a
 * nested repository answers for its own files.
 */
export function gitCheckIgnore(dir: string, names: readonly string[]): Promise<Set<string> | null> {
  if (names.length === 0) return Promise.resolve(new Set());
  return new Promise((resolve) => {
    const child = execFile(
      "git",
      ["check-ignore", "--stdin", "-z"],
      { cwd: dir, maxBuffer: 16 * 1024 * 1024, timeout: CHECK_IGNORE_TIMEOUT_MS },
      (error, stdout) => {
        const code = error ? (error as { code?: unknown }).code : SOME_IGNORED;
        if (code !== SOME_IGNORED && code !== NONE_IGNORED) return resolve(null);
        resolve(new Set(stdout.split("\0").filter((name) => name !== "")));
      },
    );
    // A git that exits before reading all names (not a repository) closes stdin early: the exit code decides.
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(names.join("\0") + "\0");
  });
}
