import type { ExitInfo, ToolHost } from "../host";

/** What a hook may print that we keep, per stream: a hook printing megabytes is cut here. */
export const HOOK_OUTPUT_CAP = 64 * 1024;
/** A hook past its time limit gets this long after SIGTERM before its group is SIGKILLed. */
const HOOK_KILL_GRACE_MS = 1_000;
/**
 * Separates the hook's stdout from its stderr in the one stream `exec` gives: the wrapper keeps
 * stderr in a variable and prints it after this mark (on the host, so a runner works the same).
 */
const STDERR_MARK = "\u0000\u001fworldline-hook-stderr\u0000";

/**
 * The wrapper around a hook's command: stdout passes through, stderr follows the mark (capped),
 * and the hook's exit code is the wrapper's. The command comes in an environment variable, so
 * no quoting of it can go wrong; it runs by `eval` in the substitution's subshell, forks but
 * no extra exec of bash (the hook's cost per tool call is mostly process starts).
 */
const WRAPPER = [
  "exec 3>&1",
  'errors=$( { eval "$WORLDLINE_HOOK_COMMAND"; } 2>&1 1>&3 3>&- )',
  "code=$?",
  `printf '\\000\\037worldline-hook-stderr\\000%s' "\${errors:0:${HOOK_OUTPUT_CAP}}"`,
  'exit "$code"',
].join("\n");

export interface HookRunResult {
  /** null when the hook was killed (time limit, cancel) or could not start. */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  ms: number;
  /** It could not be started at all. */
  startError?: string;
}

/** Runs one hook command on the host, in the workspace, the event's JSON on its stdin. */
export async function runHookCommand(
  host: ToolHost,
  input: { command: string; cwd: string; stdin: string; timeoutMs: number; signal?: AbortSignal },
): Promise<HookRunResult> {
  const started = performance.now();
  const streams = new OutputSplitter();
  let process;
  try {
    process = await host.exec({
      command: WRAPPER,
      cwd: input.cwd,
      env: {
        WORLDLINE_HOOK_COMMAND: input.command,
        WORLDLINE_PROJECT_DIR: input.cwd,
        // Claude Code's hooks find the project with this; a team's scripts use it.
        CLAUDE_PROJECT_DIR: input.cwd,
      },
      stdin: input.stdin,
      onOutput: (chunk) => streams.add(chunk),
    });
  } catch (error) {
    const ms = performance.now() - started;
    return { exitCode: null, stdout: "", stderr: "", timedOut: false, ms, startError: String(error) };
  }
  let timedOut = false;
  const stop = () => void process.stop(HOOK_KILL_GRACE_MS);
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, input.timeoutMs);
  input.signal?.addEventListener("abort", stop, { once: true });
  let exit: ExitInfo;
  try {
    ({ exit } = await process.finish());
  } finally {
    clearTimeout(timer);
    input.signal?.removeEventListener("abort", stop);
  }
  return {
    exitCode: timedOut || exit.signal ? null : exit.code,
    stdout: capped(streams.stdoutText, streams.stdoutCut),
    stderr: capped(streams.stderr, false),
    timedOut,
    ms: performance.now() - started,
  };
}

/**
 * Splits the wrapper's stream at the mark as it arrives, keeping at most the cap of each part:
 * a hook that prints megabytes is drained (it never blocks on a full pipe) but not kept.
 */
class OutputSplitter {
  stdout = "";
  stderr = "";
  stdoutCut = false;
  /** The end of the stdout part not yet known to hold no start of the mark. */
  private pending = "";
  private afterMark = false;

  add(chunk: string): void {
    if (this.afterMark) {
      if (this.stderr.length < HOOK_OUTPUT_CAP) this.stderr += chunk;
      return;
    }
    const text = this.pending + chunk;
    const at = text.indexOf(STDERR_MARK);
    if (at >= 0) {
      this.keep(text.slice(0, at));
      this.pending = "";
      this.afterMark = true;
      this.add(text.slice(at + STDERR_MARK.length));
      return;
    }
    const safe = Math.max(0, text.length - STDERR_MARK.length);
    this.keep(text.slice(0, safe));
    this.pending = text.slice(safe);
  }

  private keep(text: string): void {
    const room = HOOK_OUTPUT_CAP - this.stdout.length;
    if (text.length > room) this.stdoutCut = true;
    if (room > 0) this.stdout += text.slice(0, room);
  }

  get stdoutText(): string {
    return this.stdout + (this.afterMark ? "" : this.pending);
  }
}

function capped(text: string, cut: boolean): string {
  const kept = text.slice(0, HOOK_OUTPUT_CAP);
  return cut || text.length > HOOK_OUTPUT_CAP ? `${kept}\n[output cut at ${HOOK_OUTPUT_CAP} characters]` : kept;
}
