import fs from "node:fs/promises";
import path from "node:path";

/** AGENTS.md text beyond this is dropped, shallowest file first: the deepest is the most specific. */
export const AGENTS_MD_MAX_CHARS = 32_000;
/** Entries of the working directory listed in the prompt; enough to orient, cheap in tokens. */
export const LISTING_MAX_ENTRIES = 80;
/** A workspace may replace the default template with this file. */
export const SYSTEM_PROMPT_OVERRIDE = path.join(".worldline", "system-prompt.md");

/**
 * The default template. `{{now}}`, `{{workspace}}`, `{{listing}}`,
 * `{{agents_md}}`, `{{skills}}` and `{{memories}}` are filled in; an override file uses the same names.
 */
export const DEFAULT_SYSTEM_PROMPT_TEMPLATE = `You are Worldline, a coding agent working on the user's machine through tools.
Be direct and precise. Read before you edit; prefer small, verifiable changes; run the checks that exist; say what you did and what you did not do.
Use the todo tool for work with several steps. Use the task tool to research in a separate context when that keeps yours small.

The current time is {{now}}.
The working directory (the workspace) is {{workspace}}. Paths are relative to it.
Its top level:
{{listing}}
{{agents_md}}{{skills}}{{memories}}`;

export interface SystemPromptInput {
  workspace: string;
  now?: Date;
  /** A ready section listing the available skills (one line each); empty when there are none. */
  skills?: string;
  /** Recalled memories (server/memory), one line each; empty when none are relevant. */
  memories?: string;
}

/** The system prompt for one turn: the workspace's template (or the default) with its arguments filled in. */
export async function buildSystemPrompt(input: SystemPromptInput): Promise<string> {
  const [template, listing, agentsMd] = await Promise.all([
    readOptional(path.join(input.workspace, SYSTEM_PROMPT_OVERRIDE)),
    listWorkspace(input.workspace),
    collectAgentsMd(input.workspace),
  ]);
  const values: Record<string, string> = {
    now: (input.now ?? new Date()).toISOString(),
    workspace: input.workspace,
    listing,
    agents_md: agentsMd.length
      ? `\nProject instructions from AGENTS.md files (outermost first; deeper ones take precedence):\n${agentsMd.map((file) => `\n--- ${file.path} ---\n${file.text}`).join("\n")}\n`
      : "",
    skills: input.skills ? `\nAvailable skills (load one with the skill tool before using it; the user may invoke one with /skill:<name>):\n${input.skills}\n` : "",
    memories: input.memories
      ? `\nMemories from earlier sessions (the user's current words win over them; answer from them when they answer the question):\n${input.memories}\n`
      : "",
  };
  return (template ?? DEFAULT_SYSTEM_PROMPT_TEMPLATE).replace(/\{\{(\w+)\}\}/g, (match, name: string) => values[name] ?? match).trim();
}

/** AGENTS.md files from the repository root (the nearest folder with .git) down to `cwd`, capped, deepest kept. */
export async function collectAgentsMd(cwd: string, maxChars = AGENTS_MD_MAX_CHARS): Promise<{ path: string; text: string }[]> {
  const chain = await foldersFromRoot(cwd);
  const found: { path: string; text: string }[] = [];
  let budget = maxChars;
  for (const dir of chain.reverse()) {
    if (budget <= 0) break;
    const file = path.join(dir, "AGENTS.md");
    const text = await readOptional(file);
    if (text === undefined || !text.trim()) continue;
    const kept = text.length > budget ? `${text.slice(0, budget)}\n[truncated]` : text;
    budget -= text.length;
    found.unshift({ path: path.relative(cwd, file) || "AGENTS.md", text: kept.trim() });
  }
  return found;
}

async function foldersFromRoot(cwd: string): Promise<string[]> {
  const chain: string[] = [];
  let dir = path.resolve(cwd);
  for (;;) {
    chain.unshift(dir);
    if (await exists(path.join(dir, ".git"))) return chain;
    const parent = path.dirname(dir);
    // No repository above: only the working directory itself counts.
    if (parent === dir) return [path.resolve(cwd)];
    dir = parent;
  }
}

async function listWorkspace(workspace: string): Promise<string> {
  let entries;
  try {
    entries = await fs.readdir(workspace, { withFileTypes: true });
  } catch {
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

async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, "utf8");
  } catch {
    return undefined;
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.access(file);
    return true;
  } catch {
    return false;
  }
}
