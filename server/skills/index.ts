export { listSkills, loadSkill, parseFrontMatter, skillSummaries } from "./discover";
export { parseSkillCommand } from "./command";
export { SkillCatalog } from "./catalog";
