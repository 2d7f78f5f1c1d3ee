import type { SkillView } from "../protocol";
import { listSkills, loadSkill, skillSummaries, type LoadedSkill } from "./discover";

/** The skills of a workspace plus $WORLDLINE_HOME/skills, read fresh each time (a new SKILL.md counts at the next turn). */
export class SkillCatalog {
  constructor(private readonly home: string) {}

  list(workspace?: string): Promise<SkillView[]> {
    return listSkills({ workspace, home: this.home });
  }

  async summaries(workspace: string): Promise<string> {
    return skillSummaries(await this.list(workspace));
  }

  load(workspace: string, name: string): Promise<LoadedSkill | undefined> {
    return loadSkill({ workspace, home: this.home }, name);
  }
}
