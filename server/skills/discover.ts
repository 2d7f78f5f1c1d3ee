import { readdirSync, readFileSync, statSync } from "node:fs";
import fs from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import type { SkillView } from "../protocol";

/** The YAML parser (~40 ms to load), required by the first skill that has front matter, not at start-up. */
let yamlParse: ((text: string) => unknown) | undefined;
function parseYaml(text: string): unknown {
  yamlParse ??= (createRequire(import.meta.url)("yaml") as typeof import("yaml")).parse;
  return yamlParse(text);
}

/** Where skills live, most specific first: a workspace skill shadows a home one of the same name. */
export const WORKSPACE_SKILL_DIRS = [
  path.join(".worldline", "skills"),
  path.join(".agents", "skills"),
  path.join(".claude", "skills"),
];
/** A SKILL.md larger than this is cut when loaded; skills are instructions, not data. */
export const SKILL_MAX_CHARS = 64_000;
/** A summary line in the system prompt stays one line. */
const DESCRIPTION_MAX_CHARS = 300;
/** Folders scanned per skills directory; a runaway directory does not slow every turn. */
const MAX_SKILLS_PER_DIR = 200;
/** Parsed SKILL.md files kept between scans; past this many, the cache starts over. */
const MAX_CACHED_SKILL_FILES = 2_000;
/** A SKILL.md changed less than this long ago is parsed again at every scan (the racy-git problem). */
const RACY_MS = 100;

export interface SkillRoots {
  workspace?: string;
  /** $WORLDLINE_HOME; absent on a runner, which reads only the workspace's skills. */
  home?: string;
}

export interface LoadedSkill extends SkillView {
  /** The whole SKILL.md (capped). */
  text: string;
  /** The skill's folder: SKILL.md may point at files next to it. */
  dir: string;
}

/**
 * Every skill visible from the workspace (and the home), first occurrence of a name wins.
 * Scanned at every call (a new or edited SKILL.md counts at the next turn), with synchronous
 * directory reads and stats: microseconds each, where each async one waited for a turn of the
 * busy event loop (four missing folders cost ~3.7 ms of a turn's time to first token). A
 * SKILL.md is read and parsed again only when its size, mtime, ctime or inode changed.
 */
export async function listSkills(roots: SkillRoots): Promise<SkillView[]> {
  const found = new Map<string, SkillView>();
  for (const { dir, source } of skillDirs(roots)) {
    for (const skill of scanDir(dir, source)) if (!found.has(skill.name)) found.set(skill.name, skill);
  }
  return [...found.values()];
}

/** The full text of one skill by name, or undefined. */
export async function loadSkill(roots: SkillRoots, name: string): Promise<LoadedSkill | undefined> {
  const skill = (await listSkills(roots)).find((candidate) => candidate.name === name);
  return skill && loaded(skill, await fs.readFile(skill.path, "utf8"));
}

/** A skill with its SKILL.md's text (capped). */
export function loaded(skill: SkillView, raw: string): LoadedSkill {
  const text = raw.length > SKILL_MAX_CHARS ? `${raw.slice(0, SKILL_MAX_CHARS)}\n[truncated]` : raw;
  return { ...skill, text, dir: path.dirname(skill.path) };
}

/** One line per skill for the system prompt; "" when there are none. */
export function skillSummaries(skills: readonly SkillView[]): string {
  return skills.map((skill) => `- ${skill.name}: ${skill.description}`).join("\n");
}

/**
 * The string fields of a SKILL.md's YAML front matter (`name`, `description`, …), parsed by a YAML
 * library: quoting, folded and literal blocks and comments all mean what YAML says. Front matter
 * that is not valid YAML (or not a mapping) gives no fields: the folder name and first line stand in.
 */
export function parseFrontMatter(text: string): Record<string, string> {
  const match = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---\s*(?:\r?\n|$)/.exec(text);
  if (!match) return {};
  let data: unknown;
  try {
    data = parseYaml(match[1]);
  } catch {
    return {}; // a broken header is the skill author's to fix; the skill still loads
  }
  if (!data || typeof data !== "object" || Array.isArray(data)) return {};
  const fields: Record<string, string> = {};
  for (const [key, value] of Object.entries(data)) {
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean")
      fields[key] = String(value).trim();
  }
  return fields;
}

function skillDirs(roots: SkillRoots): { dir: string; source: SkillView["source"] }[] {
  const dirs = roots.workspace
    ? WORKSPACE_SKILL_DIRS.map((dir) => ({ dir: path.join(roots.workspace!, dir), source: "workspace" as const }))
    : [];
  return roots.home ? [...dirs, { dir: path.join(roots.home, "skills"), source: "home" as const }] : dirs;
}

/** Front matter of the SKILL.md files seen, by path, with the stat they were parsed at. */
const parsed = new Map<string, { stamp: string; name: string; description: string }>();

function scanDir(dir: string, source: SkillView["source"]): SkillView[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return []; // most workspaces have no skills folder
  }
  const skills: SkillView[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name)).slice(0, MAX_SKILLS_PER_DIR)) {
    if (!entry.isDirectory() && !entry.isSymbolicLink()) continue;
    const file = path.join(dir, entry.name, "SKILL.md");
    const skill = readSkillFile(file, entry.name);
    if (skill) skills.push({ ...skill, path: file, source });
  }
  return skills;
}

/** A SKILL.md's name and description, from the cache while the file is unchanged; undefined when unreadable. */
function readSkillFile(file: string, folder: string): { name: string; description: string } | undefined {
  let stamp: string;
  try {
    const stat = statSync(file, { bigint: true });
    if (!stat.isFile()) return undefined;
    // File times tick coarsely: a file changed just now may change again with the same stamp.
    const settled = Date.now() - Number(stat.mtimeMs) >= RACY_MS && Date.now() - Number(stat.ctimeMs) >= RACY_MS;
    stamp = settled ? `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}` : "";
  } catch {
    // no SKILL.md here (or unreadable): not a skill; the others still load
    return undefined;
  }
  const cached = parsed.get(file);
  if (stamp && cached?.stamp === stamp) return { name: cached.name, description: cached.description };
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    // removed or unreadable since the stat: skipped like a missing one
    return undefined;
  }
  const front = parseFrontMatter(text);
  const name = (front.name || folder).trim();
  const description = oneLine(front.description || firstBodyLine(text) || "(no description)");
  if (parsed.size >= MAX_CACHED_SKILL_FILES) parsed.clear();
  parsed.set(file, { stamp, name, description });
  return { name, description };
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
