import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { chooseCut } from "../../../server/agent/compaction";
import { Context } from "../../../server/agent/context";
import { DMailBox } from "../../../server/agent/dmail";
import { LoopGuard } from "../../../server/agent/loop-guard";
import { buildSystemPrompt, collectAgentsMd } from "../../../server/agent/system-prompt";

const call = (name: string, args: object, id = "c") => ({
  id,
  type: "function" as const,
  function: { name, arguments: JSON.stringify(args) },
});

describe("LoopGuard", () => {
  it("warns on the third identical step in a row and stops on the fourth", () => {
    const guard = new LoopGuard();
    const same = [call("shell", { command: "ls", cwd: "." })];
    expect([guard.observe(same), guard.observe(same), guard.observe(same), guard.observe(same)]).toEqual([
      "ok",
      "ok",
      "warn",
      "stop",
    ]);
  });

  it("treats reordered keys as the same call and resets on a different step", () => {
    const guard = new LoopGuard();
    guard.observe([call("shell", { a: 1, b: 2 })]);
    guard.observe([call("shell", { b: 2, a: 1 })]);
    expect(guard.observe([call("str_replace", { path: "x" })])).toBe("ok");
    expect(guard.observe([call("shell", { a: 1, b: 2 })])).toBe("ok");
  });
});

describe("Context view and compaction", () => {
  it("shows the summary first, then the kept tail, and drops older records", async () => {
    const context = Context.ephemeral("s");
    await context.append(
      { kind: "message", message: { role: "user", content: "old" } },
      { kind: "message", message: { role: "assistant", content: "old answer" } },
      { kind: "checkpoint", checkpointId: "cp", number: 3 },
      { kind: "message", message: { role: "user", content: "recent" } },
      { kind: "compaction", summary: "S", keepFrom: 2 },
    );
    // The summary and the kept prompt are both user messages: merged, so roles still alternate.
    expect(context.messages().map((m) => m.content)).toEqual([expect.stringMatching(/S\n\nrecent$/)]);
    expect(context.messages({ checkpoints: true }).map((m) => m.content)).toEqual([
      expect.stringMatching(/S\n\n<system>CHECKPOINT 3<\/system>\n\nrecent$/),
    ]);
    expect(context.visibleCheckpointNumbers()).toEqual([3]);
  });

  it("never cuts between a tool call and its result", () => {
    const view = [
      {
        position: 0,
        record: { kind: "message" as const, message: { role: "user" as const, content: "x".repeat(400) } },
      },
      {
        position: 1,
        record: {
          kind: "message" as const,
          message: { role: "assistant" as const, content: null, tool_calls: [call("t", {})] },
        },
      },
      {
        position: 2,
        record: {
          kind: "message" as const,
          message: { role: "tool" as const, tool_call_id: "c", content: "y".repeat(40) },
        },
      },
    ];
    expect(chooseCut(view, 30)).toBe(1);
    expect(chooseCut(view, 10_000)).toBe(0);
  });

  it("estimates tokens from the last provider count plus what came after", async () => {
    const context = Context.ephemeral("s");
    await context.append(
      { kind: "message", message: { role: "user", content: "hi" } },
      { kind: "usage", tokens: 1000 },
    );
    await context.append({ kind: "message", message: { role: "tool", tool_call_id: "c", content: "z".repeat(400) } });
    expect(context.estimatedTokens()).toBe(1000 + 100 + 4);
  });
});

describe("DMailBox", () => {
  it("accepts one D-Mail to a visible checkpoint at a time", () => {
    const box = new DMailBox(() => [0, 1]);
    expect(() => box.send({ checkpoint: 7, message: "x" })).toThrow(/no checkpoint 7/);
    box.send({ checkpoint: 1, message: "x" });
    expect(() => box.send({ checkpoint: 0, message: "y" })).toThrow(/already pending/);
    expect(box.take()).toEqual({ checkpoint: 1, message: "x" });
    expect(box.take()).toBeUndefined();
  });
});

describe("system prompt", () => {
  it("collects AGENTS.md from the repo root down to cwd, keeping the deepest under the cap", async () => {
    const root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-sp-")));
    const cwd = path.join(root, "pkg", "app");
    await fs.mkdir(path.join(root, ".git"), { recursive: true });
    await fs.mkdir(cwd, { recursive: true });
    await fs.writeFile(path.join(root, "AGENTS.md"), "ROOT ".repeat(20));
    await fs.writeFile(path.join(cwd, "AGENTS.md"), "DEEP rules");
    const all = await collectAgentsMd(cwd);
    expect(all.map((f) => f.text)).toEqual([expect.stringContaining("ROOT"), "DEEP rules"]);
    const capped = await collectAgentsMd(cwd, 20);
    expect(capped[capped.length - 1].text).toBe("DEEP rules");
    expect(capped[0].text).toContain("[truncated]");
    const prompt = await buildSystemPrompt({ workspace: cwd, now: new Date("2026-01-02T03:04:05Z") });
    // The time changes every turn: it travels in the turn's <context> block, never in the fixed system prompt.
    expect(prompt).not.toContain("2026-01-02T03:04");
    expect(prompt).toContain("AGENTS.md");
    expect(prompt).toContain("DEEP rules");
  });

  it("uses the workspace's own template when there is one", async () => {
    const ws = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-sp-")));
    await fs.mkdir(path.join(ws, ".worldline"));
    await fs.writeFile(path.join(ws, ".worldline", "system-prompt.md"), "Custom agent in {{workspace}}.\n{{listing}}");
    await fs.writeFile(path.join(ws, "file.txt"), "x");
    const prompt = await buildSystemPrompt({ workspace: ws });
    expect(prompt.startsWith(`Custom agent in ${ws}.`)).toBe(true);
    expect(prompt).toContain("file.txt");
  });
});
