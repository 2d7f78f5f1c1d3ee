import * as z from "zod";
import { defineTool, type Tool } from "../../tools";

export interface SubagentRunner {
  (input: {
    description: string;
    prompt: string;
    parentToolCallId: string;
    signal: AbortSignal;
  }): Promise<{ ok: boolean; answer: string }>;
}

/** Module-level, so its JSON Schema is converted once, not at every turn (server/tools/define.ts caches by schema). */
const TaskParameters = z.object({
  description: z.string().min(1).max(200).describe("A few words naming the task, shown to the user."),
  prompt: z
    .string()
    .min(1)
    .max(50_000)
    .describe("The full instructions for the subagent, including what to report back."),
});

export function createTaskTool(run: SubagentRunner, toolNames: readonly string[]): Tool {
  return defineTool({
    name: "task",
    description: [
      "Hand a self-contained research task to a subagent that works in its own, fresh context and reports back one answer.",
      `It can use only these tools: ${toolNames.join(", ") || "none"}; it cannot change files or run commands.`,
      "Use it to search a large codebase or read many files without filling your own context.",
      "The subagent knows nothing of this conversation: put everything it needs in the prompt, and say exactly what the answer must contain.",
      "Several task calls in one response run in parallel.",
    ].join(" "),
    parameters: TaskParameters,
    needsApproval: ({ description }) => ({
      level: "none",
      subject: "task",
      scope: "task",
      description: `Subagent: ${description}`,
      risk: "none",
    }),
    // The nested loop is bounded by its own step limit and answers the abort itself.
    timeoutMs: 0,
    async execute({ description, prompt }, ctx) {
      const { ok, answer } = await run({ description, prompt, parentToolCallId: ctx.toolCallId, signal: ctx.signal });
      return { output: answer, isError: !ok };
    },
  });
}
