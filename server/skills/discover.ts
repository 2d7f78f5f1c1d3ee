import fs from "node:fs/promises";
import path from "node:path";
import type { SkillView } from "../protocol";

/** Where skills live, most specific first: a workspace skill shadows a home one of the same name. */
export const WORKSPACE_SKILL_DIRS = [path.join(".worldline", "skills"), path.join(".agents", "skills"), path.join(".claude", "skills")];
/** A SKILL.md larger than this is cut when loaded; skills are instructions, not data. */
export const SKILL_MAX_CHARS = 64_000;
/** A summary line in the system prompt stays one line. */
const DESCRIPTION_MAX_CHARS = 300;
/** Folders scanned per skills directory; a runaway directory does not slow every turn. */
const MAX_SKILLS_PER_DIR = 200;

export interface SkillRoots {
  workspace?: string;
  /** $WORLDLINE_HOME */
  home: string;
}

export interface LoadedSkill extends SkillView {
  /** The whole SKILL.md (capped). */
  text: string;
  /** The skill's folder: SKILL.md may point at files next to it. */
  dir: string;
}

/** Every skill visible from the workspace (and the home), first occurrence of a name wins. */
export async function listSkills(roots: SkillRoots): Promise<SkillView[]> {
  const found = new Map<string, SkillView>();
  for (const { dir, source } of skillDirs(roots)) {
    for (const skill of await scanDir(dir, source)) if (!found.has(skill.name)) found.set(skill.name, skill);
  }
  return [...found.values()];
}

/** The full text of one skill by name, or undefined. */
export async function loadSkill(roots: SkillRoots, name: string): Promise<LoadedSkill | undefined> {
  const skill = (await listSkills(roots)).find((candidate) => candidate.name === name);
  if (!skill) return undefined;
  const raw = await fs.readFile(skill.path, "utf8");
  const text = raw.length > SKILL_MAX_CHARS ? `${raw.slice(0, SKILL_MAX_CHARS)}\n[truncated]` : raw;
  return { ...skill, text, dir: path.dirname(skill.path) };
}

/** One line per skill for the system prompt; "" when there are none. */
export function skillSummaries(skills: readonly SkillView[]): string {
  return skills.map((skill) => `- ${skill.name}: ${skill.description}`).join("\n");
}

/** `name` and `description` from a SKILL.md's front matter (plain `key: value` lines and folded blocks). */
export function parseFrontMatter(text: string): Record<string, string> {
  const match = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---\s*(?:\r?\n|$)/.exec(text);
  if (!match) return {};
  const fields: Record<string, string> = {};
  let current: string | undefined;
  for (const line of match[1].split(/\r?\n/)) {
    const field = /^([A-Za-z][\w-]*):\s*(.*)$/.exec(line);
    if (field) {
      current = field[1];
      const value = field[2].trim();
      fields[current] = /^[>|][+-]?$/.test(value) ? "" : unquote(value);
    } else if (current && /^\s+\S/.test(line)) {
      fields[current] = `${fields[current]} ${line.trim()}`.trim();
    }
  }
  return fields;
}

function skillDirs(roots: SkillRoots): { dir: string; source: SkillView["source"] }[] {
  const dirs = roots.workspace ? WORKSPACE_SKILL_DIRS.map((dir) => ({ dir: path.join(roots.workspace!, dir), source: "workspace" as const })) : [];
  return [...dirs, { dir: path.join(roots.home, "skills"), source: "home" as const }];
}

async function scanDir(dir: string, source: SkillView["source"]): Promise<SkillView[]> {
  let entries;
  try {
    entries = await fs.readdir(dir, { withFileTypes: true });
  } catch {
    return []; // most workspaces have no skills folder
  }
  const skills: SkillView[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name)).slice(0, MAX_SKILLS_PER_DIR)) {
    if (!entry.isDirectory() && !entry.isSymbolicLink()) continue;
    const file = path.join(dir, entry.name, "SKILL.md");
    let text: string;
    try {
      text = await fs.readFile(file, "utf8");
    } catch {
      continue;
    }
    const front = parseFrontMatter(text);
    const name = (front.name || entry.name).trim();
    const description = oneLine(front.description || firstBodyLine(text) || "(no description)");
    skills.push({ name, description, path: file, source });
  }
  return skills;
}

function firstBodyLine(text: string): string | undefined {
  const body = text.replace(/^\uFEFF?---\r?\n[\s\S]*?\r?\n---\s*/, "");
  return body
    .split(/\r?\n/)
    .map((line) => line.replace(/^#+\s*/, "").trim())
    .find(Boolean);
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > DESCRIPTION_MAX_CHARS ? `${line.slice(0, DESCRIPTION_MAX_CHARS - 1)}…` : line;
}

function unquote(value: string): string {
  if ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'"))) return value.slice(1, -1);
  return value;
}
