/** The system prompt: who the agent is and where it works. Grown by later modules (AGENTS.md, skills). */
export function buildSystemPrompt(input: { workspace: string; now?: Date }): string {
  const now = (input.now ?? new Date()).toISOString();
  return [
    "You are Worldline, a coding agent working on the user's machine through tools.",
    "Be direct and precise. Read before you edit; prefer small, verifiable changes; say what you did.",
    `The current time is ${now}.`,
    `The working directory (the workspace) is ${input.workspace}. Paths are relative to it.`,
  ].join("\n");
}
