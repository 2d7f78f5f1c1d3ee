import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { readSse, startTestBridge, type TestBridge } from "../helpers";
import { startRunner, tempDir, type RunnerProcess } from "./support";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const TSX = path.join(ROOT, "node_modules/.bin/tsx");
const WHERE_SERVER = path.join(ROOT, "tests/integration/runners/fixtures/where-mcp-server.ts");

interface Checkpoint {
  id: string;
  number: number;
  reason: string;
  has_snapshot: boolean;
  note: string | null;
  files: { path: string; status: string; additions: number; deletions: number }[];
}

/** Checkpoints, skills and MCP stdio servers of a session whose workspace is on a runner. */
describe("a runner session's checkpoints, skills and MCP servers", () => {
  let fake: FakeLlm;
  let hub: TestBridge;
  let root: string;
  let runner: RunnerProcess;

  async function session(folder: string): Promise<string> {
    const workspace = path.join(root, folder);
    await fs.mkdir(workspace, { recursive: true });
    const response = await hub.api("/api/v1/sessions", { body: { workspace, runner: "gamma", yolo: true } });
    expect(response.status).toBe(201);
    return ((await response.json()) as { id: string }).id;
  }

  async function turn(sessionId: string, message: string) {
    const response = await hub.api("/api/v1/chat/stream", { body: { message, session_id: sessionId } });
    expect(response.status).toBe(200);
    await readSse(response);
    return (await (await hub.api(`/api/v1/sessions/${sessionId}/events?after=0`)).json()) as {
      type: string;
      payload: any;
    }[];
  }

  async function get<T>(url: string): Promise<T> {
    const response = await hub.api(url);
    expect(response.status).toBe(200);
    return (await response.json()) as T;
  }

  beforeAll(async () => {
    fake = await startFakeLlm();
    hub = await startTestBridge({ llmUrl: fake.url });
    root = await tempDir("wl-runner-gamma-root-");
    const token = await hub.services.runners!.add("gamma");
    const home = await tempDir("wl-runner-gamma-home-");
    // Its own HOME too: an MCP server it starts shows whose basic environment it got.
    runner = startRunner({ hub: hub.url, token, home, roots: [root], env: { HOME: home } });
    await runner.connected();
  }, 90_000);

  afterAll(async () => {
    runner?.child.kill("SIGKILL");
    await hub?.stop();
    await fake?.close();
  });

  it("snapshots on the runner: timeline line counts, Changes hunks, a files rewind there, and a fork that stays there", async () => {
    const sessionId = await session("project");
    const workspace = path.join(root, "project");
    await fs.writeFile(path.join(workspace, "keep.txt"), "one\ntwo\nthree\n");
    fake.script(
      {
        toolCalls: [
          { id: "w1", name: "write_file", arguments: { path: "made.txt", content: "alpha\nbeta\n" } },
          {
            id: "w2",
            name: "str_replace",
            arguments: { path: "keep.txt", edits: [{ old_text: "two", new_text: "TWO" }] },
          },
        ],
      },
      { text: "Changed two files." },
    );
    await turn(sessionId, "change the files");

    const checkpoints = await get<Checkpoint[]>(`/api/v1/sessions/${sessionId}/checkpoints`);
    expect(checkpoints.length).toBeGreaterThanOrEqual(3);
    // Every row has its snapshot (a missing one says why in its note).
    expect(checkpoints.map((checkpoint) => [checkpoint.has_snapshot, checkpoint.note])).toEqual(
      checkpoints.map(() => [true, null]),
    );
    const changed = checkpoints.flatMap((checkpoint) => checkpoint.files);
    expect(changed).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: "made.txt", status: "added", additions: 2, deletions: 0 }),
        expect.objectContaining({ path: "keep.txt", status: "modified", additions: 1, deletions: 1 }),
      ]),
    );
    // The shadow repository is in the runner's data directory, none in the hub's.
    expect((await fs.readdir(path.join(runner.home, "snapshots"))).length).toBe(1);
    await expect(fs.readdir(path.join(hub.home, "snapshots"))).rejects.toThrow();

    const changes = await get<{ files: { path: string; hunks: { old_text: string; new_text: string }[] }[] }>(
      `/api/v1/sessions/${sessionId}/changes?base=start`,
    );
    const keep = changes.files.find((file) => file.path === "keep.txt");
    expect(keep?.hunks).toEqual([expect.objectContaining({ old_text: "two\n", new_text: "TWO\n" })]);
    expect(changes.files.map((file) => file.path).sort()).toEqual(["keep.txt", "made.txt"]);

    const start = checkpoints.find((checkpoint) => checkpoint.reason === "turn")!;
    const rewound = await hub.api(`/api/v1/sessions/${sessionId}/rewind`, {
      body: { checkpoint: start.id, conversation: false, files: true },
    });
    expect(rewound.status).toBe(200);
    expect(await fs.readFile(path.join(workspace, "keep.txt"), "utf8")).toBe("one\ntwo\nthree\n");
    await expect(fs.stat(path.join(workspace, "made.txt"))).rejects.toThrow();

    const undone = await hub.api(`/api/v1/sessions/${sessionId}/rewind/undo`, { body: {} });
    expect(undone.status).toBe(200);
    expect(await fs.readFile(path.join(workspace, "made.txt"), "utf8")).toBe("alpha\nbeta\n");

    const last = checkpoints.at(-1)!;
    const forked = await hub.api(`/api/v1/sessions/${sessionId}/fork`, { body: { checkpoint: last.id } });
    expect(forked.status).toBe(201);
    const fork = (await forked.json()) as { id: string; workspace: string };
    expect(fork.workspace.startsWith(path.join(runner.home, "forks"))).toBe(true);
    expect(await fs.readFile(path.join(fork.workspace, "keep.txt"), "utf8")).toBe("one\nTWO\nthree\n");
    expect((await get<{ runner: string | null }>(`/api/v1/sessions/${fork.id}`)).runner).toBe("gamma");

    // The runner's forks folder is no workspace (as WORLDLINE_HOME is none on the hub): not the folder
    // holding every session's forks, and not a fork for a session the runner did not make it for.
    const forks = path.join(runner.home, "forks");
    for (const workspace of [forks, fork.workspace]) {
      const refused = await hub.api("/api/v1/sessions", { body: { workspace, runner: "gamma" } });
      expect(refused.status, workspace).toBe(403);
      const body = (await refused.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("workspace:forbidden");
      expect(body.error.message).toContain("forks folder");
    }
    // Nor is it offered by the folder picker.
    const picked = await hub.api(`/api/v1/runners/gamma/folders?path=${encodeURIComponent(forks)}`);
    expect(picked.status).toBeGreaterThanOrEqual(400);
  });

  it("finds and loads a skill in the runner's workspace", async () => {
    const sessionId = await session("skilled");
    const dir = path.join(root, "skilled", ".worldline", "skills", "deploy-gamma");
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(
      path.join(dir, "SKILL.md"),
      "---\nname: deploy-gamma\ndescription: Deploys from the gamma box.\n---\nRun ./deploy.sh on gamma.\n",
    );
    fake.script({ text: "Loaded." });
    await turn(sessionId, "/skill:deploy-gamma now");
    const system = fake.requests.at(-1)!.body.messages[0].content as string;
    expect(system).toContain("- deploy-gamma: Deploys from the gamma box.");
    // Loaded through the runner too: its text is in what the model was sent.
    expect(JSON.stringify(fake.requests.at(-1)!.body.messages)).toContain("Run ./deploy.sh on gamma.");
  });

  it("starts the workspace's MCP stdio servers on the runner", async () => {
    const sessionId = await session("with-mcp");
    const workspace = path.join(root, "with-mcp");
    await fs.mkdir(path.join(workspace, ".worldline"), { recursive: true });
    await fs.writeFile(
      path.join(workspace, ".worldline", "mcp.json"),
      JSON.stringify({ mcpServers: { where: { command: TSX, args: [WHERE_SERVER] } } }),
    );
    fake.script({ toolCalls: [{ id: "m1", name: "where__where", arguments: {} }] }, { text: "It runs there." });
    const events = await turn(sessionId, "where does the MCP server run?");
    const result = events.find((event) => event.type === "tool.state" && event.payload.state !== "running");
    expect(result?.payload.isError).toBeFalsy();
    // The runner's HOME (not the hub's), and none of the runner's other variables (WORLDLINE_HOME).
    expect(result?.payload.output).toBe(`cwd=${workspace} HOME=${runner.home} WORLDLINE_HOME=-`);
  });
});
