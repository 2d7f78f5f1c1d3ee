import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { applyEvents, emptyTranscript, type CheckpointView, type EventEnvelope } from "../../../server/protocol";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { readSse, startTestBridge, type TestBridge } from "../helpers";

/** sha256 of every file under `dir` (relative paths), symlinks as their target; nothing is left out. */
async function hashTree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  async function walk(rel: string): Promise<void> {
    for (const entry of await fs.readdir(path.join(dir, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      const full = path.join(dir, child);
      if (entry.isDirectory()) await walk(child);
      else if (entry.isSymbolicLink()) out[child] = `link:${await fs.readlink(full)}`;
      else
        out[child] = createHash("sha256")
          .update(await fs.readFile(full))
          .digest("hex");
    }
  }
  await walk("");
  return out;
}

let fake: FakeLlm;
let bridge: TestBridge;
let sessionId: string;

async function json<T>(response: Response): Promise<T> {
  const text = await response.text();
  if (!response.ok) throw new Error(`${response.status} ${text}`);
  return JSON.parse(text) as T;
}

async function chat(message: string, session = sessionId) {
  const events = await readSse(await bridge.api("/api/v1/chat/stream", { body: { session_id: session, message } }));
  expect(events.at(-1)?.event).toBe("done");
  return events;
}

const checkpoints = (session = sessionId) =>
  bridge.api(`/api/v1/sessions/${session}/checkpoints`).then((r) => json<CheckpointView[]>(r));
const events = (session = sessionId) =>
  bridge.api(`/api/v1/sessions/${session}/events`).then((r) => json<EventEnvelope[]>(r));
const rewind = (body: Record<string, unknown>, session = sessionId) =>
  bridge.api(`/api/v1/sessions/${session}/rewind`, { body });

/** One agent turn: edit a file, then a shell command that creates and deletes files, then an answer. */
function scriptEditingTurn(): void {
  fake.script(
    { toolCalls: [{ name: "write_file", arguments: { path: "src/a.txt", content: "agent wrote this\n" } }] },
    {
      toolCalls: [
        {
          name: "shell",
          arguments: {
            command: "mkdir -p gen && echo made > gen/made.txt && rm old.txt && mv src/b.txt src/b-renamed.txt",
          },
        },
      ],
    },
    { text: "All done." },
  );
}

beforeAll(async () => {
  fake = await startFakeLlm();
});

afterAll(async () => {
  await fake.close();
});

beforeEach(async () => {
  fake.reset();
  bridge = await startTestBridge({ llmUrl: fake.url });
  const ws = bridge.workspace;
  await fs.mkdir(path.join(ws, "src"), { recursive: true });
  await fs.writeFile(path.join(ws, "src/a.txt"), "original a\n");
  await fs.writeFile(path.join(ws, "src/b.txt"), "bee\n");
  await fs.writeFile(path.join(ws, "old.txt"), "old\n");
  await fs.writeFile(path.join(ws, "image.bin"), Buffer.from([0, 1, 2, 255, 0, 7]));
  await fs.symlink("src/a.txt", path.join(ws, "link-to-a"));
  sessionId = (
    await json<{ id: string }>(await bridge.api("/api/v1/sessions", { body: { workspace: ws, yolo: true } }))
  ).id;
});

afterEach(async () => {
  await bridge.stop();
});

describe("checkpoints through HTTP with a real agent turn", () => {
  it("lists a checkpoint per turn, step and turn end with the files each changed", async () => {
    scriptEditingTurn();
    await chat("edit things");
    const list = await checkpoints();
    expect(list.map((c) => c.reason)).toEqual(["turn", "step", "step", "step", "turn_end"]);
    expect(list.map((c) => c.number)).toEqual([0, 1, 2, 3, 4]);
    expect(list.every((c) => c.has_snapshot && c.turn === 1)).toBe(true);
    // Step 2's checkpoint shows what step 1 did (write_file); step 3's what the shell did.
    expect(list[2].files).toEqual([
      expect.objectContaining({ path: "src/a.txt", status: "modified", additions: 1, deletions: 1 }),
    ]);
    const shellChanges = list[3].files.map((f) => `${f.status}:${f.path}`).sort();
    expect(shellChanges).toEqual(expect.arrayContaining(["added:gen/made.txt", "deleted:old.txt"]));
    expect(list[3].files.some((f) => f.path.includes("b-renamed"))).toBe(true);

    const diff = await json<{ files: { path: string }[]; patch: string }>(
      await bridge.api(`/api/v1/sessions/${sessionId}/checkpoints/${list[0].id}/diff`),
    );
    expect(diff.files.map((f) => f.path)).toEqual(expect.arrayContaining(["src/a.txt", "old.txt", "gen/made.txt"]));
    expect(diff.patch).toContain("+agent wrote this");
  });

  it("rewinds files and conversation exactly, refuses over a user's edit, force overrides, and undoes", async () => {
    const before = await hashTree(bridge.workspace);
    scriptEditingTurn();
    await chat("edit things");
    const afterTurn = await hashTree(bridge.workspace);
    expect(afterTurn).not.toEqual(before);
    const start = (await checkpoints())[0];

    // The user edits a file the agent touched, and adds one of their own.
    await fs.writeFile(path.join(bridge.workspace, "src/a.txt"), "the user's own edit\n");
    await fs.writeFile(path.join(bridge.workspace, "notes.md"), "user notes\n");
    const userState = await hashTree(bridge.workspace);

    const refused = await rewind({ checkpoint: start.id });
    expect(refused.status).toBe(409);
    const body = (await refused.json()) as { error: { code: string; details: { paths: string[] } } };
    expect(body.error.code).toBe("checkpoint:conflict");
    expect(body.error.details.paths).toEqual(["notes.md", "src/a.txt"]);
    expect(await hashTree(bridge.workspace)).toEqual(userState); // nothing written

    const forced = await json<{ undo_checkpoint: string; written: string[]; deleted: string[] }>(
      await rewind({ checkpoint: start.id, force: true }),
    );
    expect(await hashTree(bridge.workspace)).toEqual(before);
    expect(forced.deleted).toEqual(expect.arrayContaining(["gen/made.txt", "notes.md"]));

    // Conversation: the model sees no trace of the rewound turn, and every tab's transcript shows the rewind.
    const log = await events();
    const rewound = log.filter((e) => e.type === "checkpoint.rewound");
    expect(rewound).toHaveLength(1);
    const transcript = applyEvents(emptyTranscript(), log);
    expect(transcript.items.map((i) => i.kind)).toEqual(["notice"]);
    fake.script({ text: "fresh start" });
    await chat("again");
    const lastRequest = fake.requests.at(-1)!;
    const sent = JSON.stringify(lastRequest.body);
    expect(sent).not.toContain("edit things");
    expect(sent).toContain("again");

    // The user's edit is not lost: undo brings back the state the rewind replaced (history included).
    const undone = await json<{ checkpoint: string }>(
      await bridge.api(`/api/v1/sessions/${sessionId}/rewind/undo`, { method: "POST" }),
    );
    expect(undone.checkpoint).toBe(forced.undo_checkpoint);
    expect(await hashTree(bridge.workspace)).toEqual(userState);
    const afterUndo = applyEvents(emptyTranscript(), await events());
    expect(afterUndo.items.some((i) => i.kind === "user" && i.text === "edit things")).toBe(true);
    expect(afterUndo.items.some((i) => i.kind === "user" && i.text === "again")).toBe(false);
  });

  it("rewinds only the conversation or only the files when asked", async () => {
    const before = await hashTree(bridge.workspace);
    scriptEditingTurn();
    await chat("edit things");
    const afterTurn = await hashTree(bridge.workspace);
    const start = (await checkpoints())[0];

    await json(await rewind({ checkpoint: start.number, files: false }));
    expect(await hashTree(bridge.workspace)).toEqual(afterTurn);
    expect(applyEvents(emptyTranscript(), await events()).items.some((i) => i.kind === "user")).toBe(false);

    await json(await rewind({ checkpoint: start.id, conversation: false }));
    expect(await hashTree(bridge.workspace)).toEqual(before);
  });

  it("/undo rewinds the last turn; a turn-less session has nothing to undo", async () => {
    const empty = await bridge.api(`/api/v1/sessions/${sessionId}/undo`, { method: "POST" });
    expect(empty.status).toBe(404);
    const before = await hashTree(bridge.workspace);
    await chat("just talk");
    const middle = await hashTree(bridge.workspace);
    scriptEditingTurn();
    await chat("edit things");
    await json(await bridge.api(`/api/v1/sessions/${sessionId}/undo`, { method: "POST" }));
    expect(await hashTree(bridge.workspace)).toEqual(middle);
    expect(middle).toEqual(before);
    const items = applyEvents(emptyTranscript(), await events()).items;
    expect(items.filter((i) => i.kind === "user").map((i) => (i as { text: string }).text)).toEqual(["just talk"]);
  });

  it("forks at a checkpoint into its own folder that continues from the old state", async () => {
    const before = await hashTree(bridge.workspace);
    scriptEditingTurn();
    await chat("edit things");
    const afterTurn = await hashTree(bridge.workspace);
    const start = (await checkpoints())[0];

    const fork = await json<{ id: string; workspace: string }>(
      await bridge.api(`/api/v1/sessions/${sessionId}/fork`, { body: { checkpoint: start.id } }),
    );
    expect(fork.workspace.startsWith(path.join(bridge.home, "forks"))).toBe(true);
    expect(await hashTree(fork.workspace)).toEqual(before);
    const session = await json<{ id: string; workspace: string }>(await bridge.api(`/api/v1/sessions/${fork.id}`));
    expect(session.workspace).toBe(fork.workspace);

    fake.script(
      { toolCalls: [{ name: "write_file", arguments: { path: "fork-only.txt", content: "in the fork\n" } }] },
      { text: "forked work" },
    );
    await chat("work in the fork", fork.id);
    expect(await fs.readFile(path.join(fork.workspace, "fork-only.txt"), "utf8")).toBe("in the fork\n");
    expect(await hashTree(bridge.workspace)).toEqual(afterTurn); // the source is untouched
    const forkCheckpoints = await checkpoints(fork.id);
    expect(forkCheckpoints[0].reason).toBe("fork");
  });

  it("forks mid-conversation with the history of that moment", async () => {
    fake.script({ text: "first answer" });
    await chat("first question");
    scriptEditingTurn();
    await chat("edit things");
    const list = await checkpoints();
    const secondTurn = list.find((c) => c.reason === "turn" && c.turn === 2)!;
    const fork = await json<{ id: string; workspace: string }>(
      await bridge.api(`/api/v1/sessions/${sessionId}/fork`, { body: { checkpoint: secondTurn.id } }),
    );
    const items = applyEvents(emptyTranscript(), await events(fork.id)).items;
    expect(items.filter((i) => i.kind === "user").map((i) => (i as { text: string }).text)).toEqual(["first question"]);
    fake.script({ text: "ok" });
    await chat("continue", fork.id);
    const sent = JSON.stringify(fake.requests.at(-1)!.body);
    expect(sent).toContain("first question");
    expect(sent).toContain("first answer");
    expect(sent).not.toContain("edit things");
  });

  it("an edit the user made between turns still blocks a rewind to before it, after later turns", async () => {
    scriptEditingTurn();
    await chat("edit things");
    const start = (await checkpoints())[0];
    await fs.writeFile(path.join(bridge.workspace, "src/a.txt"), "user fixed it\n");
    fake.script({ text: "noted" });
    await chat("look at my fix");
    const second = (await checkpoints()).find((c) => c.reason === "turn" && c.turn === 2)!;
    expect(second.files).toEqual([expect.objectContaining({ path: "src/a.txt", outside: true })]);

    const refused = await rewind({ checkpoint: start.id });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: { details: { paths: string[] } } }).error.details.paths).toEqual([
      "src/a.txt",
    ]);
    expect(await fs.readFile(path.join(bridge.workspace, "src/a.txt"), "utf8")).toBe("user fixed it\n");
    // Rewinding to after the edit is fine: the user's version stays.
    await json(await rewind({ checkpoint: second.id }));
    expect(await fs.readFile(path.join(bridge.workspace, "src/a.txt"), "utf8")).toBe("user fixed it\n");
  });

  it("forks onto a new git worktree when the workspace is a git repository", async () => {
    const git = (...args: string[]) =>
      execFileSync("git", ["-C", bridge.workspace, "-c", "user.email=t@t", "-c", "user.name=t", ...args], {
        env: { ...process.env, GIT_DIR: undefined, GIT_WORK_TREE: undefined, GIT_INDEX_FILE: undefined },
      });
    git("init", "-q");
    git("add", "-A");
    git("commit", "-qm", "init");
    const before = await hashTree(bridge.workspace);
    scriptEditingTurn();
    await chat("edit things");
    const start = (await checkpoints())[0];
    const fork = await json<{ id: string; workspace: string; worktree: boolean }>(
      await bridge.api(`/api/v1/sessions/${sessionId}/fork`, { body: { checkpoint: start.id, worktree: true } }),
    );
    expect(fork.worktree).toBe(true);
    const forkTree = await hashTree(fork.workspace);
    expect(forkTree[".git"]).toBeDefined(); // a worktree's .git file
    delete forkTree[".git"];
    const sourceBefore = Object.fromEntries(Object.entries(before).filter(([p]) => !p.startsWith(".git/")));
    expect(forkTree).toEqual(sourceBefore);
    expect(git("worktree", "list").toString()).toContain(fork.workspace);
  });

  it("reports an unknown checkpoint and a bad body", async () => {
    expect((await rewind({ checkpoint: "nope" })).status).toBe(404);
    expect((await rewind({ checkpoint: 0, extra: 1 })).status).toBe(400);
    expect((await rewind({ checkpoint: 0, files: false, conversation: false })).status).toBe(400);
  });
});
