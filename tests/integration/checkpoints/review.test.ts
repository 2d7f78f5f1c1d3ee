import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventEnvelope, ReviewChanges, ReviewRevertResult, CheckpointView } from "../../../server/protocol";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { messagesOf, startAgentBridge, type AgentBridge } from "../agent/harness";

let fake: FakeLlm;
let bridge: AgentBridge;
let sessionId: string;

const lines = (...values: string[]) => values.map((value) => `${value}\n`).join("");

async function json<T>(response: Response): Promise<T> {
  const text = await response.text();
  if (!response.ok) throw new Error(`${response.status} ${text}`);
  return JSON.parse(text) as T;
}
const changes = (base = "start") =>
  bridge.api(`/api/v1/sessions/${sessionId}/changes?base=${base}`).then((r) => json<ReviewChanges>(r));
const revert = (body: Record<string, unknown>) => bridge.api(`/api/v1/sessions/${sessionId}/changes/revert`, body);
const accept = (body: Record<string, unknown>) => bridge.api(`/api/v1/sessions/${sessionId}/changes/accept`, body);
const read = (name: string) => fs.readFile(path.join(bridge.workspace, name), "utf8");

beforeAll(async () => {
  fake = await startFakeLlm();
  bridge = await startAgentBridge(fake.url);
  await fs.writeFile(path.join(bridge.workspace, "app.txt"), lines("one", "two", "three", "four", "five", "six"));
  await fs.writeFile(path.join(bridge.workspace, "old.txt"), lines("obsolete"));
  sessionId = await bridge.createSession();
  fake.script(
    {
      toolCalls: [
        {
          name: "write_file",
          arguments: { path: "app.txt", content: lines("one", "TWO", "three", "four", "five", "six", "seven") },
        },
        { name: "write_file", arguments: { path: "new.txt", content: lines("brand new") } },
        { name: "shell", arguments: { command: "rm old.txt" } },
      ],
    },
    { text: "Edited." },
  );
  await bridge.chat(sessionId, "edit things");
  expect(messagesOf(fake.requests[1]).filter((m) => m.role === "tool")).toHaveLength(3);
});
afterAll(async () => {
  await bridge.close();
  await fake.close();
});

describe("the Changes view API", () => {
  it("lists every file the session changed since its start, with contents and hunks", async () => {
    const view = await changes();
    expect(view.base.number).toBe(0);
    expect(view.files.map((f) => [f.path, f.status]).sort()).toEqual([
      ["app.txt", "modified"],
      ["new.txt", "added"],
      ["old.txt", "deleted"],
    ]);
    const app = view.files.find((f) => f.path === "app.txt")!;
    expect(app.old_content).toBe(lines("one", "two", "three", "four", "five", "six"));
    expect(app.hunks.map((h) => [h.old_start, h.old_lines, h.new_start, h.new_lines, h.new_text])).toEqual([
      [2, 1, 2, 1, "TWO\n"],
      [6, 0, 7, 1, "seven\n"],
    ]);
    expect(view.pending).toBe(3);
  });

  it("accepts a hunk and a file per base: they leave the pending list, every tab hears of it", async () => {
    const before = await changes();
    const app = before.files.find((f) => f.path === "app.txt")!;
    const afterHunk = await json<ReviewChanges>(await accept({ path: "app.txt", hunk: app.hunks[1].id }));
    const appNow = afterHunk.files.find((f) => f.path === "app.txt")!;
    expect(appNow.hunks.map((h) => h.accepted)).toEqual([false, true]);
    expect(appNow.accepted).toBe(false);
    const afterFile = await json<ReviewChanges>(await accept({ path: "new.txt" }));
    expect(afterFile.files.find((f) => f.path === "new.txt")?.accepted).toBe(true);
    expect(afterFile.pending).toBe(2);
    // Another base has its own review state.
    const list = await json<CheckpointView[]>(await bridge.api(`/api/v1/sessions/${sessionId}/checkpoints`));
    const other = await changes(String(list[1].number));
    expect(other.files.every((f) => !f.accepted)).toBe(true);
    const events = await bridge.events(sessionId);
    expect(events.filter((e) => e.type === "review.updated").map((e) => e.payload)).toMatchObject([
      { action: "accept", path: "app.txt", hunk: app.hunks[1].id },
      { action: "accept", path: "new.txt", hunk: null },
    ]);
    // Accepting a stale hunk id is a conflict.
    expect((await accept({ path: "app.txt", hunk: "0000000000000000" })).status).toBe(409);
  });

  it("reverts one hunk: checkpointed, announced to every tab, and undoable", async () => {
    const app = (await changes()).files.find((f) => f.path === "app.txt")!;
    const checkpointsBefore = await json<CheckpointView[]>(
      await bridge.api(`/api/v1/sessions/${sessionId}/checkpoints`),
    );
    const result = await json<ReviewRevertResult>(await revert({ path: "app.txt", hunk: app.hunks[0].id }));
    expect(result.written).toEqual(["app.txt"]);
    expect(await read("app.txt")).toBe(lines("one", "two", "three", "four", "five", "six", "seven"));

    const checkpointsAfter = await json<CheckpointView[]>(
      await bridge.api(`/api/v1/sessions/${sessionId}/checkpoints`),
    );
    const undoPoint = checkpointsAfter.find((c) => c.id === result.undo_checkpoint);
    expect(undoPoint?.reason).toBe("rewind");
    expect(checkpointsAfter.length).toBe(checkpointsBefore.length + 1);
    const events: EventEnvelope[] = await bridge.events(sessionId);
    expect(events.at(-1)).toMatchObject({
      type: "review.updated",
      payload: { action: "revert", path: "app.txt", hunk: app.hunks[0].id, undoCheckpointId: result.undo_checkpoint },
    });
    expect(
      events.some((e) => e.type === "checkpoint.created" && e.payload.checkpointId === result.undo_checkpoint),
    ).toBe(true);
    // The remaining hunk (accepted earlier) is still there and still accepted.
    const remaining = (await changes()).files.find((f) => f.path === "app.txt")!;
    expect(remaining.hunks).toHaveLength(1);
    expect(remaining.hunks[0].accepted).toBe(true);
    // A hunk that is gone cannot be reverted twice.
    expect((await revert({ path: "app.txt", hunk: app.hunks[0].id })).status).toBe(409);

    // Undo: the revert is a rewind like any other (no conflict: the baseline followed the revert).
    const undone = await bridge.api(`/api/v1/sessions/${sessionId}/rewind/undo`, {});
    expect(undone.status).toBe(200);
    expect(await read("app.txt")).toBe(lines("one", "TWO", "three", "four", "five", "six", "seven"));
  });

  it("reverts whole files: an added file goes, a deleted one comes back, an unchanged path is 404", async () => {
    const added = await json<ReviewRevertResult>(await revert({ path: "new.txt" }));
    expect(added.deleted).toEqual(["new.txt"]);
    await expect(fs.access(path.join(bridge.workspace, "new.txt"))).rejects.toThrow();
    const restored = await json<ReviewRevertResult>(await revert({ path: "old.txt" }));
    expect(restored.written).toEqual(["old.txt"]);
    expect(await read("old.txt")).toBe(lines("obsolete"));
    expect((await changes()).files.map((f) => f.path)).toEqual(["app.txt"]);
    // Undo brings the last revert back.
    await json(await bridge.api(`/api/v1/sessions/${sessionId}/rewind/undo`, {}));
    await expect(fs.access(path.join(bridge.workspace, "old.txt"))).rejects.toThrow();
    expect((await revert({ path: "nothing-here.txt" })).status).toBe(404);
  });
});
