import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

/** AGENTS.md text beyond this is dropped, shallowest file first: the deepest is the most specific. */
export const AGENTS_MD_MAX_CHARS = 32_000;
/** Entries of the working directory listed in the prompt; enough to orient, cheap in tokens. */
export const LISTING_MAX_ENTRIES = 80;
/** A workspace may replace the default template with this file. */
export const SYSTEM_PROMPT_OVERRIDE = path.join(".worldline", "system-prompt.md");

/**
 * The default template. `{{now}}` (when the session started), `{{workspace}}`, `{{listing}}`,
 * `{{agents_md}}` and `{{skills}}` are filled in once per session; an override file uses the same names
 * (`{{memories}}` is accepted and empty: memories come with each user message, server/agent/turn-context.ts).
 * The prompt is fixed for the session's life, so every request starts with the same bytes and a provider's
 * prompt cache keeps working; what changes travels at the end, in the turn's `<context>` block.
 */
export const DEFAULT_SYSTEM_PROMPT_TEMPLATE = `You are Worldline, a coding agent working on the user's machine through tools.
Be direct and precise. Read before you edit; prefer small, verifiable changes; run the checks that exist; say what you did and what you did not do.
Use the todo tool for work with several steps. Use the task tool to research in a separate context when that keeps yours small.

The working directory (the workspace) is {{workspace}}. Paths are relative to it.
Its top level when this session started:
{{listing}}
{{agents_md}}{{skills}}
A user message may end with a <context> block written by Worldline, not by the user: the current time, memories from earlier sessions recalled for it (the user's current words win over them; answer from them when they answer the question), and what changed since you were last told (the top-level listing, AGENTS.md instructions, your task list). Newer context replaces older.`;

export interface SystemPromptInput {
  workspace: string;
  /** When the session started (the default template no longer shows it; override templates may). */
  now?: Date;
  /** A ready section listing the available skills (one line each); empty when there are none. */
  skills?: string;
}

/** What the system prompt takes from the workspace's files (see `readWorkspacePrompt`). */
export interface WorkspacePrompt {
  /** The override template, if the workspace has one. */
  template: string | undefined;
  listing: string;
  agentsMd: { path: string; text: string }[];
}

/** The system prompt of a new session: the workspace's template (or the default) with its arguments filled in. */
export async function buildSystemPrompt(input: SystemPromptInput): Promise<string> {
  return renderSystemPrompt(await readWorkspacePrompt(input.workspace), input);
}

/**
 * The workspace's part of the prompt, read at every turn (for the system prompt of a new session, and to
 * tell the model what changed). The reads are synchronous: a directory listing, a few stats and small
 * files take microseconds, where each awaited call waited for a turn of the busy event loop (~1 ms of the
 * time to first token).
 */
export async function readWorkspacePrompt(workspace: string): Promise<WorkspacePrompt> {
  return {
    template: readOptional(path.join(workspace, SYSTEM_PROMPT_OVERRIDE)),
    listing: listWorkspace(workspace),
    agentsMd: await collectAgentsMd(workspace),
  };
}

/** The AGENTS.md section as the model reads it ("" when there are none). */
export function formatAgentsMd(agentsMd: WorkspacePrompt["agentsMd"]): string {
  return agentsMd.length
    ? `\nProject instructions from AGENTS.md files (outermost first; deeper ones take precedence):\n${agentsMd.map((file) => `\n--- ${file.path} ---\n${file.text}`).join("\n")}\n`
    : "";
}

/** Fills the template with the workspace's files and the session's skills. */
export function renderSystemPrompt({ template, listing, agentsMd }: WorkspacePrompt, input: SystemPromptInput): string {
  const values: Record<string, string> = {
    now: (input.now ?? new Date()).toISOString(),
    workspace: input.workspace,
    listing,
    agents_md: formatAgentsMd(agentsMd),
    skills: input.skills
      ? `\nAvailable skills (load one with the skill tool before using it; the user may invoke one with /skill:<name>):\n${input.skills}\n`
      : "",
    memories: "",
  };
  return (template ?? DEFAULT_SYSTEM_PROMPT_TEMPLATE)
    .replace(/\{\{(\w+)\}\}/g, (match, name: string) => values[name] ?? match)
    .trim();
}

/** AGENTS.md files from the repository root (the nearest folder with .git) down to `cwd`, capped, deepest kept. */
export async function collectAgentsMd(
  cwd: string,
  maxChars = AGENTS_MD_MAX_CHARS,
): Promise<{ path: string; text: string }[]> {
  const chain = foldersFromRoot(cwd);
  const found: { path: string; text: string }[] = [];
  let budget = maxChars;
  for (const dir of chain.reverse()) {
    if (budget <= 0) break;
    const file = path.join(dir, "AGENTS.md");
    const text = readOptional(file);
    if (text === undefined || !text.trim()) continue;
    const kept = text.length > budget ? `${text.slice(0, budget)}\n[truncated]` : text;
    budget -= text.length;
    found.unshift({ path: path.relative(cwd, file) || "AGENTS.md", text: kept.trim() });
  }
  return found;
}

function foldersFromRoot(cwd: string): string[] {
  const chain: string[] = [];
  let dir = path.resolve(cwd);
  for (;;) {
    chain.unshift(dir);
    if (existsSync(path.join(dir, ".git"))) return chain;
    const parent = path.dirname(dir);
    // No repository above: only the working directory itself counts.
    if (parent === dir) return [path.resolve(cwd)];
    dir = parent;
  }
}

function listWorkspace(workspace: string): string {
  let entries;
  try {
    entries = readdirSync(workspace, { withFileTypes: true });
  } catch {
    // the model is told so instead of a listing
    return "(the directory cannot be read)";
  }
  const names = entries
    .filter((entry) => entry.name !== ".git")
    .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
    .sort((a, b) => Number(b.endsWith("/")) - Number(a.endsWith("/")) || a.localeCompare(b));
  if (names.length === 0) return "(empty)";
  const shown = names.slice(0, LISTING_MAX_ENTRIES).join("\n");
  return names.length > LISTING_MAX_ENTRIES ? `${shown}\n… and ${names.length - LISTING_MAX_ENTRIES} more` : shown;
}

/** A regular file's text (a FIFO or device named AGENTS.md must not block the bridge), or undefined. */
function readOptional(file: string): string | undefined {
  try {
    return statSync(file).isFile() ? readFileSync(file, "utf8") : undefined;
  } catch {
    // absent or unreadable: the prompt goes without it
    return undefined;
  }
}
