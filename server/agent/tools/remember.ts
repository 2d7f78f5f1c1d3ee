import * as z from "zod";
import { defineTool, type Tool } from "../../tools";

/** Where the `remember` tool writes (server/memory through the runtime). */
export interface RememberStore {
  remember(input: {
    text: string;
    type: "fact" | "preference" | "note" | "lesson";
    scope: "global" | "workspace" | "session";
    importance: number;
  }): Promise<{ id: string }>;
}

/** Where the `skill` tool reads (server/skills through the runtime). */
export interface SkillLoader {
  load(name: string): Promise<{ name: string; path: string; text: string } | undefined>;
}

// Module-level, so their JSON Schemas are converted once, not at every turn (server/tools/define.ts caches by schema).
const RememberParameters = z.object({
  text: z.string().min(3).max(1000).describe("One self-contained sentence, understandable without this conversation."),
  type: z
    .enum(["fact", "preference", "note", "lesson"])
    .default("fact")
    .describe("fact, preference (how the user wants things done), note, or lesson (a reusable insight)."),
  scope: z
    .enum(["global", "workspace", "session"])
    .default("workspace")
    .describe("global: about the user, everywhere; workspace: about this project; session: only this conversation."),
  importance: z.number().int().min(1).max(5).default(3).describe("1 (trivia) to 5 (must never be forgotten)."),
});
const SkillParameters = z.object({
  name: z.string().min(1).max(200).describe("The skill's name exactly as listed under 'Available skills'."),
});

export function createRememberTool(store: RememberStore): Tool {
  return defineTool({
    name: "remember",
    description: [
      "Store a memory that future sessions will be reminded of.",
      "Use it for durable facts about the user or the project, the user's preferences and standing instructions, and lessons learned the hard way.",
      "Do not store secrets, passwords or details that only matter for the current task.",
    ].join(" "),
    parameters: RememberParameters,
    needsApproval: () => ({
      level: "none",
      subject: "remember",
      scope: "remember",
      description: "Store a memory",
      risk: "none",
    }),
    async execute(args) {
      const memory = await store.remember(args);
      return `Remembered (${args.type}, ${args.scope}): ${args.text} [id ${memory.id}]`;
    },
  });
}

export function createSkillTool(loader: SkillLoader): Tool {
  return defineTool({
    name: "skill",
    description:
      "Load the full instructions of one of the available skills listed in the system prompt, before doing a task the skill covers.",
    parameters: SkillParameters,
    needsApproval: ({ name }) => ({
      level: "none",
      subject: `skill ${name}`,
      scope: "skill",
      description: `Load the skill ${name}`,
      risk: "none",
    }),
    async execute({ name }) {
      const skill = await loader.load(name);
      if (!skill)
        return {
          isError: true,
          output: `No skill named "${name}". Use one of the names listed under 'Available skills'.`,
        };
      return `Skill ${skill.name} (${skill.path}):\n\n${skill.text}`;
    },
  });
}
