import { promises as fs } from "node:fs";
import type { WorkspaceHost } from "../host";
import type { SkillView } from "../protocol";
import { listSkills, loaded, loadSkill, skillSummaries, type LoadedSkill } from "./discover";

/** A session's host, when its workspace is on a runner: the workspace's skills are read there. */
type SkillHost = Pick<WorkspaceHost, "workspaceSkills" | "readText">;

/**
 * The skills of a workspace plus $WORLDLINE_HOME/skills, read fresh each time (a new SKILL.md
 * counts at the next turn). A workspace on a runner has its skills found and read there
 * (`host.workspaceSkills`, `host.readText`); the home's are this machine's.
 */
export class SkillCatalog {
  constructor(private readonly home: string) {}

  async list(workspace?: string, host?: SkillHost): Promise<SkillView[]> {
    if (!workspace || !host?.workspaceSkills) return listSkills({ workspace, home: this.home });
    const [own, home] = await Promise.all([host.workspaceSkills(workspace), listSkills({ home: this.home })]);
    // A workspace skill shadows a home one of the same name.
    return [...own, ...home.filter((skill) => !own.some((candidate) => candidate.name === skill.name))];
  }

  async summaries(workspace: string, host?: SkillHost): Promise<string> {
    return skillSummaries(await this.list(workspace, host));
  }

  async load(workspace: string, name: string, host?: SkillHost): Promise<LoadedSkill | undefined> {
    if (!host?.workspaceSkills) return loadSkill({ workspace, home: this.home }, name);
    const skill = (await this.list(workspace, host)).find((candidate) => candidate.name === name);
    if (!skill) return undefined;
    const raw = skill.source === "workspace" ? await host.readText(skill.path) : await fs.readFile(skill.path, "utf8");
    return raw === undefined ? undefined : loaded(skill, raw);
  }
}
