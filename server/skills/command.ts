/** `/skill:<name> [rest]` at the start of a prompt: the user asks for a skill by name. */
const SKILL_COMMAND = /^\/skill:([\w.-]+)(?:\s+([\s\S]*))?$/;

export function parseSkillCommand(prompt: string): { name: string; rest: string } | undefined {
  const match = SKILL_COMMAND.exec(prompt.trim());
  return match ? { name: match[1], rest: match[2]?.trim() ?? "" } : undefined;
}
