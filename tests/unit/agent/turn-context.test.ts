import { describe, expect, it } from "vitest";
import { Context } from "../../../server/agent/context";
import { prepareTurnPrompt } from "../../../server/agent/turn-context";

const recall = (memories = "") => ({ memories, skills: "", invokedSkill: "", direct: false });
const workspacePrompt = (listing: string, agents = "Use tabs.") => ({
  template: undefined,
  listing,
  agentsMd: agents ? [{ path: "AGENTS.md", text: agents }] : [],
});

/** One turn as the loop would record it: the system records, the prompt with its block, an answer. */
async function turn(context: Context, prompt: ReturnType<typeof prepareTurnPrompt>, text: string) {
  await context.append(
    ...prompt.before,
    { kind: "message", message: { role: "user", content: `${text}\n\n${prompt.userContext.text}` } },
    ...prompt.userContext.records,
    { kind: "message", message: { role: "assistant", content: "ok" } },
  );
}

describe("prepareTurnPrompt", () => {
  it("renders the system prompt once, then tells only what changed, at the end of the turn's message", async () => {
    const context = Context.ephemeral("s");
    const now = new Date("2026-11-23T20:00:00Z");
    const input = { context, workspace: "/ws", now };
    const first = prepareTurnPrompt({
      ...input,
      workspacePrompt: workspacePrompt("a.ts"),
      recall: recall("- [fact] x"),
    });
    expect(first.systemPrompt).toContain("a.ts");
    expect(first.systemPrompt).toContain("Use tabs.");
    expect(first.systemPrompt).not.toContain("2026-11-23");
    expect(first.userContext.text).toBe(
      "<context>\nTime: 2026-11-23 20:00 UTC\n\nRecalled memories:\n- [fact] x\n</context>",
    );
    await turn(context, first, "one");

    // Same workspace, same memory: the same system prompt, and only the time.
    const later = new Date("2026-11-23T21:30:00Z");
    const second = prepareTurnPrompt({
      ...input,
      now: later,
      workspacePrompt: workspacePrompt("a.ts"),
      recall: recall("- [fact] x"),
    });
    expect(second.before).toEqual([]);
    expect(second.systemPrompt).toBe(first.systemPrompt);
    expect(second.userContext.text).toBe("<context>\nTime: 2026-11-23 21:30 UTC\n</context>");
    await turn(context, second, "two");

    // A new file, edited AGENTS.md and a task list: told once each.
    const changed = prepareTurnPrompt({
      ...input,
      workspacePrompt: workspacePrompt("a.ts\nb.ts", "Use spaces."),
      recall: recall(),
      todos: JSON.stringify([{ title: "Ship", status: "in_progress" }]),
    });
    expect(changed.systemPrompt).toBe(first.systemPrompt);
    expect(changed.userContext.text).toContain("top level changed; now:\na.ts\nb.ts");
    expect(changed.userContext.text).toContain("AGENTS.md instructions changed");
    expect(changed.userContext.text).toContain("Use spaces.");
    expect(changed.userContext.text).toContain("[~] Ship");
    await turn(context, changed, "three");
    const again = prepareTurnPrompt({
      ...input,
      workspacePrompt: workspacePrompt("a.ts\nb.ts", "Use spaces."),
      recall: recall(),
      todos: JSON.stringify([{ title: "Ship", status: "in_progress" }]),
    });
    expect(again.userContext.text).toBe("<context>\nTime: 2026-11-23 20:00 UTC\n</context>");
    expect(again.userContext.records).toEqual([]);
  });
});
