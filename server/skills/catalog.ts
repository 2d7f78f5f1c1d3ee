import { promises as fs } from "node:fs";
import type { WorkspaceHost } from "../host";
import type { SkillView } from "../protocol";
import { listSkills, loaded, skillSummaries, type LoadedSkill } from "./discover";

/** Where a workspace is: its skills are found and read through its host (this machine's or a runner's). */
type SkillHost = Pick<WorkspaceHost, "workspaceSkills" | "readText">;

/**
 * The skills of a workspace plus $WORLDLINE_HOME/skills, read fresh each time (a new SKILL.md
 * counts at the next turn). A workspace's skills are found and read through its host
 * (`host.workspaceSkills`, `host.readText`; this machine's by default); the home's are this machine's.
 */
export class SkillCatalog {
  constructor(
    private readonly home: string,
    /** This machine's host, for a workspace given without one (GET /api/v1/skills?workspace=). */
    private readonly local: SkillHost,
  ) {}

  async list(workspace?: string, host: SkillHost = this.local): Promise<SkillView[]> {
    if (!workspace) return listSkills({ home: this.home });
    const [own, home] = await Promise.all([host.workspaceSkills(workspace), listSkills({ home: this.home })]);
    // A workspace skill shadows a home one of the same name.
    return [...own, ...home.filter((skill) => !own.some((candidate) => candidate.name === skill.name))];
  }

  async summaries(workspace: string, host?: SkillHost): Promise<string> {
    return skillSummaries(await this.list(workspace, host));
  }

  async load(workspace: string, name: string, host: SkillHost = this.local): Promise<LoadedSkill | undefined> {
    const skill = (await this.list(workspace, host)).find((candidate) => candidate.name === name);
    if (!skill) return undefined;
    const raw = skill.source === "workspace" ? await host.readText(skill.path) : await fs.readFile(skill.path, "utf8");
    return raw === undefined ? undefined : loaded(skill, raw);
  }
}
