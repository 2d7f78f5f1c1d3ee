import * as z from "zod";
import { defineTool, type Tool } from "../../tools";

export const TodoItem = z.object({
  title: z.string().min(1).max(500).describe("What to do, as a short imperative line."),
  status: z.enum(["pending", "in_progress", "done"]).describe("pending, in_progress (at most one at a time) or done."),
});
export type TodoItem = z.infer<typeof TodoItem>;

/** Keeps the list readable in the UI and in the model's context. */
const MAX_TODOS = 50;

/** Module-level, so its JSON Schema is converted once, not at every turn (server/tools/define.ts caches by schema). */
const TodoParameters = z.object({
  todos: z.array(TodoItem).max(MAX_TODOS).describe("The complete, ordered task list."),
});

export interface TodoStore {
  save(items: TodoItem[]): Promise<void>;
}

export function createTodoTool(store: TodoStore): Tool {
  return defineTool({
    name: "todo",
    description: [
      "Set the task list shown to the user: send the whole list each time (it replaces the previous one).",
      "Use it for work with three or more steps: add the steps, mark one in_progress while you work on it and done when it is finished.",
      "Skip it for simple one-step requests.",
    ].join(" "),
    parameters: TodoParameters,
    needsApproval: () => ({
      level: "none",
      subject: "todo",
      scope: "todo",
      description: "Update the task list",
      risk: "none",
    }),
    async execute({ todos }) {
      await store.save(todos);
      if (todos.length === 0) return "The task list is now empty.";
      const mark = { pending: "[ ]", in_progress: "[~]", done: "[x]" } as const;
      return `Task list updated:\n${todos.map((item) => `${mark[item.status]} ${item.title}`).join("\n")}`;
    },
  });
}
