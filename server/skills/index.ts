export {
  listSkills,
  loadSkill,
  parseFrontMatter,
  skillSummaries,
  SKILL_MAX_CHARS,
  WORKSPACE_SKILL_DIRS,
} from "./discover";
export type { LoadedSkill, SkillRoots } from "./discover";
export { parseSkillCommand } from "./command";
export { SkillCatalog } from "./catalog";
