import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryService } from "../../../server/memory";
import type { SessionEvent } from "../../../server/protocol";
import { openDb, type Db } from "../../../server/store";

let db: Db;
let memory: MemoryService;

beforeAll(async () => {
  ({ db } = await openDb(await fs.mkdtemp(path.join(os.tmpdir(), "wl-mem-"))));
  memory = new MemoryService(db);
});
afterAll(async () => {
  await db.$disconnect();
});

describe("MemoryService against a real database", () => {
  it("recalls global, own-workspace and own-session memories only, relevant ones first, standing preferences always", async () => {
    await memory.add({ text: "The user's editor is Helix.", type: "fact" });
    await memory.add({ text: "Project A deploys with Fly.", type: "fact", scope: "workspace", workspace: "/ws/a" });
    await memory.add({ text: "Project B deploys with Heroku.", type: "fact", scope: "workspace", workspace: "/ws/b" });
    await memory.add({
      text: "This session is about the login bug.",
      type: "note",
      scope: "session",
      session_id: "s1",
    });
    await memory.add({ text: "Always answer in British English.", type: "preference", importance: 5 });

    const recall = await memory.recall({
      sessionId: "s1",
      workspace: "/ws/a",
      prompt: "How does this project deploy?",
    });
    const texts = recall.memories.map((m) => m.text);
    expect(texts[0]).toBe("Project A deploys with Fly.");
    expect(texts).toContain("Always answer in British English.");
    expect(texts).not.toContain("Project B deploys with Heroku.");
    expect(recall.section).toContain("- [fact, workspace] Project A deploys with Fly.");
    expect(recall.direct).toBe(true);

    const other = await memory.recall({ sessionId: "s2", workspace: "/ws/b", prompt: "login bug" });
    expect(other.memories.map((m) => m.text)).not.toContain("This session is about the login bug.");
  });

  it("records the decision and the stored memory as events, and does not store the same thing twice", async () => {
    const events: SessionEvent[] = [];
    const turn = {
      sessionId: "s1",
      workspace: "/ws/a",
      turnId: "t1",
      prompt: "Remember that the linter is Biome.",
      answer: "ok",
      transcript: "",
      outcome: "completed",
      emit: (e: SessionEvent) => events.push(e),
    };
    await memory.afterTurn(turn);
    expect(events.map((e) => e.type)).toEqual(["memory.policy_decision", "memory.stored"]);
    await memory.afterTurn({ ...turn, turnId: "t2" });
    expect(events.slice(2)).toEqual([
      {
        type: "memory.policy_decision",
        payload: expect.objectContaining({ decision: "skip", reason: "Already remembered." }),
      },
    ]);
    await memory.afterTurn({ ...turn, turnId: "t3", outcome: "cancelled" });
    expect(events).toHaveLength(3);
  });

  it("reflection without a model is skipped with a reason", async () => {
    await memory.updateSettings({ reflection: true, auto_memory: false });
    const events: SessionEvent[] = [];
    await memory.afterTurn({
      sessionId: "s1",
      workspace: "/ws/a",
      turnId: "t9",
      prompt: "do it",
      answer: "done",
      transcript: "",
      outcome: "completed",
      emit: (e) => events.push(e),
    });
    expect(events).toEqual([
      { type: "reflection.completed", payload: expect.objectContaining({ outcome: "skipped" }) },
    ]);
    expect(await memory.settings()).toEqual({ reflection: true, auto_memory: false });
  });
});
