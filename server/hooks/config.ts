import { createHash } from "node:crypto";
import * as z from "zod";

/** The events a hooks file may name (the same names as Claude Code's `hooks` setting). */
export const HOOK_EVENTS = [
  "SessionStart",
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "Stop",
  "SessionEnd",
  "Notification",
] as const;
export type HookEventName = (typeof HOOK_EVENTS)[number];

/** A command's time limit when its entry names none, as in Claude Code. */
export const DEFAULT_HOOK_TIMEOUT_S = 60;

const HookCommand = z.object({
  type: z.literal("command"),
  command: z.string().min(1),
  /** Seconds. */
  timeout: z.number().positive().max(3_600).optional(),
});

const HookMatcher = z.object({
  matcher: z.string().optional(),
  hooks: z.array(HookCommand),
});

const HooksSetting = z.record(z.string(), z.array(HookMatcher));

/** One command to run for an event, with the file it came from. */
export interface HookEntry {
  event: HookEventName;
  /** The matcher as written; empty or `*` matches every tool. */
  matcher: string;
  command: string;
  timeoutMs: number;
  file: string;
}

/** A hooks file as read: its entries, or why none of them run. */
export interface HooksFile {
  file: string;
  sha256: string;
  entries: HookEntry[];
  /** The file does not parse or names an unknown event: a notice names the file and line, and no hook of it runs. */
  error?: string;
}

/**
 * Claude Code's tool names for the tools we have (its matchers fire on ours): a team's file
 * written for `Bash` or `Edit|Write` works unchanged.
 */
export const CLAUDE_TOOL_NAMES: Record<string, string[]> = {
  shell: ["Bash"],
  read_file: ["Read"],
  write_file: ["Write"],
  str_replace: ["Edit", "MultiEdit"],
  grep: ["Grep"],
  glob: ["Glob"],
  fetch_url: ["WebFetch"],
  list_dir: ["LS"],
  task: ["Task"],
  todo: ["TodoWrite"],
};

/**
 * Reads a hooks file's text: the hooks sit under `hooks` (every file we read has
 * that shape: `.worldline/hooks.json`, `$WORLDLINE_HOME/hooks.json` and `.claude/settings.json`).
 */
export function parseHooksFile(file: string, text: string): HooksFile {
  const sha256 = createHash("sha256").update(text).digest("hex");
  const failed = (line: number, why: string): HooksFile => ({
    file,
    sha256,
    entries: [],
    error: `${file}:${line}: ${why}; no hook of this file runs until it is fixed.`,
  });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return failed(lineOfParseError(text, error), `not valid JSON (${(error as Error).message})`);
  }
  const hooks = json && typeof json === "object" ? (json as { hooks?: unknown }).hooks : undefined;
  if (hooks === undefined) return { file, sha256, entries: [] };
  const setting = HooksSetting.safeParse(hooks);
  if (!setting.success) {
    const issue = setting.error.issues[0];
    const key = [...issue.path].reverse().find((part) => typeof part === "string");
    return failed(lineOf(text, key ? `"${key}"` : `"hooks"`), `${issue.path.join(".") || "hooks"}: ${issue.message}`);
  }
  const entries: HookEntry[] = [];
  for (const [event, matchers] of Object.entries(setting.data)) {
    if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
      return failed(lineOf(text, `"${event}"`), `unknown hook event "${event}" (known: ${HOOK_EVENTS.join(", ")})`);
    }
    for (const { matcher = "", hooks: commands } of matchers) {
      if (matcherPattern(matcher) === null) {
        return failed(
          lineOf(text, JSON.stringify(matcher)),
          `the matcher ${JSON.stringify(matcher)} is not a valid regular expression`,
        );
      }
      for (const hook of commands) {
        entries.push({
          event: event as HookEventName,
          matcher,
          command: hook.command,
          timeoutMs: (hook.timeout ?? DEFAULT_HOOK_TIMEOUT_S) * 1_000,
          file,
        });
      }
    }
  }
  return { file, sha256, entries };
}

/** Whether an entry's matcher fires for a tool: our name or a Claude Code name of it, matched whole. */
export function matchesTool(matcher: string, tool: string): boolean {
  const pattern = matcherPattern(matcher);
  if (!pattern) return pattern === undefined;
  return [tool, ...(CLAUDE_TOOL_NAMES[tool] ?? [])].some((name) => pattern.test(name));
}

/** undefined: matches everything; null: not a valid expression. */
function matcherPattern(matcher: string): RegExp | undefined | null {
  if (matcher === "" || matcher === "*") return undefined;
  try {
    return new RegExp(`^(?:${matcher})$`);
  } catch {
    return null;
  }
}

function lineOf(text: string, needle: string): number {
  const at = text.indexOf(needle);
  return at < 0 ? 1 : text.slice(0, at).split("\n").length;
}

/** JSON.parse names a position (`at position 42` or `(line 3 column 5)`); its line, or 1. */
function lineOfParseError(text: string, error: unknown): number {
  const message = error instanceof Error ? error.message : "";
  const line = /line (\d+)/.exec(message);
  if (line) return Number(line[1]);
  const position = /position (\d+)/.exec(message);
  return position ? text.slice(0, Number(position[1])).split("\n").length : 1;
}
