import fs from "node:fs/promises";
import path from "node:path";
import { io } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as store from "../../../server/store";
import { testDatabaseUrl } from "../../db";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { emitCommand, readSse, startTestBridge, waitFor, type TestBridge } from "../helpers";
import { startRunner, tempDir, type RunnerProcess } from "./support";

/** Short, so the kill -9 test sees the grace end without waiting the real 30 s. */
const GRACE_MS = 2_000;

interface ToolState {
  toolCallId: string;
  state: string;
  output?: string;
  isError?: boolean;
}

describe("runners: workspaces on another machine", () => {
  let fake: FakeLlm;
  let hub: TestBridge;
  let alphaRoot: string;
  let betaRoot: string;
  let outside: string;
  let alpha: RunnerProcess;
  let beta: RunnerProcess;
  const runners: RunnerProcess[] = [];

  async function enroll(name: string, roots: string[] = []): Promise<string> {
    return hub.services.runners!.add(name, roots);
  }

  function launch(options: { token: string; home: string; roots: string[]; name?: string }): RunnerProcess {
    const runner = startRunner({ hub: hub.url, ...options });
    runners.push(runner);
    return runner;
  }

  async function createSession(body: Record<string, unknown>) {
    const response = await hub.api("/api/v1/sessions", { body });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  }

  async function turn(sessionId: string, message: string) {
    const response = await hub.api("/api/v1/chat/stream", { body: { message, session_id: sessionId } });
    expect(response.status).toBe(200);
    await readSse(response);
    const events = (await (await hub.api(`/api/v1/sessions/${sessionId}/events?after=0`)).json()) as {
      type: string;
      payload: any;
    }[];
    return events;
  }

  function finished(events: { type: string; payload: any }[]): ToolState[] {
    return events
      .filter((event) => event.type === "tool.state" && event.payload.state !== "running")
      .map((event) => event.payload as ToolState);
  }

  beforeAll(async () => {
    process.env.WORLDLINE_RUNNER_GRACE_MS = String(GRACE_MS);
    fake = await startFakeLlm();
    hub = await startTestBridge({ llmUrl: fake.url });
    alphaRoot = await tempDir("wl-runner-alpha-root-");
    betaRoot = await tempDir("wl-runner-beta-root-");
    outside = await tempDir("wl-runner-outside-");
    await fs.writeFile(path.join(outside, "secret.txt"), "not for the hub\n");
    await fs.writeFile(path.join(alphaRoot, "hello.txt"), "hello from alpha\nsecond line\n");
    await fs.symlink(outside, path.join(alphaRoot, "escape"));
    alpha = launch({ token: await enroll("alpha"), home: await tempDir("wl-runner-alpha-home-"), roots: [alphaRoot] });
    beta = launch({ token: await enroll("beta"), home: await tempDir("wl-runner-beta-home-"), roots: [betaRoot] });
    await Promise.all([alpha.connected(), beta.connected()]);
  }, 90_000);

  afterAll(async () => {
    delete process.env.WORLDLINE_RUNNER_GRACE_MS;
    for (const runner of runners) runner.child.kill("SIGKILL");
    await hub?.stop();
    await fake?.close();
  });

  it("lists connected runners with their roots, and prints the connected line", async () => {
    expect(alpha.stdout()).toContain(`Worldline runner alpha connected to ${hub.url}`);
    const list = (await (await hub.api("/api/v1/runners")).json()) as {
      name: string;
      connected: boolean;
      roots: string[];
      last_seen: string | null;
    }[];
    expect(list.map((runner) => [runner.name, runner.connected, runner.roots])).toEqual([
      ["alpha", true, [alphaRoot]],
      ["beta", true, [betaRoot]],
    ]);
    expect(list.every((runner) => runner.last_seen !== null)).toBe(true);
    // The credential is stored, not the token; the runner holds it in its own home.
    const saved = JSON.parse(await fs.readFile(path.join(alpha.home, "runner.json"), "utf8")) as { credential: string };
    expect(saved.credential).toMatch(/^wlr_cred_/);
    expect((await fs.stat(path.join(alpha.home, "runner.json"))).mode & 0o777).toBe(0o600);
  });

  it("runs a whole turn's tools on the runner's machine", async () => {
    const created = await createSession({ workspace: alphaRoot, runner: "alpha", yolo: true });
    expect(created.status).toBe(201);
    expect(created.body.runner).toBe("alpha");
    const sessionId = created.body.id as string;
    const got = (await (await hub.api(`/api/v1/sessions/${sessionId}`)).json()) as { runner: string | null };
    expect(got.runner).toBe("alpha");

    fake.script(
      {
        toolCalls: [
          { id: "c1", name: "read_file", arguments: { path: "hello.txt" } },
          { id: "c2", name: "write_file", arguments: { path: "made/by-agent.txt", content: "written on alpha\n" } },
          { id: "c3", name: "list_dir", arguments: {} },
        ],
      },
      {
        toolCalls: [
          { id: "c4", name: "shell", arguments: { command: "echo ran-on-$(basename $PWD) && cat made/by-agent.txt" } },
          { id: "c5", name: "grep", arguments: { pattern: "alpha" } },
          { id: "c6", name: "glob", arguments: { pattern: "**/*.txt" } },
          {
            id: "c7",
            name: "str_replace",
            arguments: { path: "hello.txt", edits: [{ old_text: "second", new_text: "2nd" }] },
          },
        ],
      },
      { text: "All done on the runner." },
    );
    const events = await turn(sessionId, "work on the runner");
    const results = new Map(finished(events).map((state) => [state.toolCallId, state]));
    expect(results.get("c1")?.output).toContain("hello from alpha");
    expect(results.get("c2")?.output).toContain("Created made/by-agent.txt");
    expect(results.get("c3")?.output).toContain("hello.txt");
    expect(results.get("c4")?.output).toContain(`ran-on-${path.basename(alphaRoot)}`);
    expect(results.get("c4")?.output).toContain("written on alpha");
    expect(results.get("c5")?.output).toContain("hello.txt:1:hello from alpha");
    expect(results.get("c6")?.output).toContain("made/by-agent.txt");
    expect(results.get("c7")?.isError).toBe(false);
    // The files are on the runner's disk, where its root is.
    expect(await fs.readFile(path.join(alphaRoot, "made/by-agent.txt"), "utf8")).toBe("written on alpha\n");
    expect(await fs.readFile(path.join(alphaRoot, "hello.txt"), "utf8")).toBe("hello from alpha\n2nd line\n");
    expect(events.map((event) => event.type)).toContain("turn.completed");
    // The model saw the runner's workspace listing in its system prompt.
    const system = fake.requests.at(-1)!.body.messages[0].content as string;
    expect(system).toContain("hello.txt");

    // Conversation only: the files stay as the turn left them (files rewinds: workspace.test.ts).
    const talkBack = await hub.api(`/api/v1/sessions/${sessionId}/rewind`, {
      body: { checkpoint: 0, conversation: true, files: false },
    });
    expect(talkBack.status).toBe(200);
    expect(await fs.readFile(path.join(alphaRoot, "made/by-agent.txt"), "utf8")).toBe("written on alpha\n");
  }, 60_000);

  it("shows the runner's files in the file tree and editor, saves there, and reports changes made there", async () => {
    const created = await createSession({ workspace: betaRoot, runner: "beta" });
    const sessionId = created.body.id as string;
    await fs.mkdir(path.join(betaRoot, "src"), { recursive: true });
    await fs.writeFile(path.join(betaRoot, "src/app.ts"), "export const app = 1;\n");
    const base = `/api/v1/sessions/${sessionId}/files`;
    const tree = (await (await hub.api(`${base}/tree`)).json()) as { entries: { name: string; type: string }[] };
    expect(tree.entries).toEqual([{ name: "src", path: "src", type: "dir" }]);
    const file = (await (await hub.api(`${base}/content?path=src/app.ts`)).json()) as { content: string; hash: string };
    expect(file.content).toBe("export const app = 1;\n");
    const saved = await hub.api(`${base}/content`, {
      method: "PUT",
      body: { path: "src/app.ts", content: "export const app = 2;\n", baseHash: file.hash },
    });
    expect(saved.status).toBe(200);
    expect(await fs.readFile(path.join(betaRoot, "src/app.ts"), "utf8")).toBe("export const app = 2;\n");
    const stale = await hub.api(`${base}/content`, {
      method: "PUT",
      body: { path: "src/app.ts", content: "lost?", baseHash: file.hash },
    });
    expect(stale.status).toBe(409);
    const conflict = (await stale.json()) as { error: { code: string; details: { currentHash: string } } };
    expect(conflict.error.code).toBe("files:conflict");
    expect(conflict.error.details.currentHash).toMatch(/^[0-9a-f]{16}$/);
    const outside = await hub.api(`${base}/content?path=../${path.basename(alphaRoot)}/hello.txt`);
    expect(outside.status).toBe(403);

    const socket = await hub.socket();
    await emitCommand(socket, "files.watch", { sessionId });
    await hub.api(`${base}/tree?dir=src`);
    const changed = new Promise<{ sessionId: string; paths: string[] }>((resolve) => {
      socket.on("files.changed", (message: { sessionId: string; paths: string[] }) => {
        if (message.paths.includes("src/made-on-beta.ts")) resolve(message);
      });
    });
    await fs.writeFile(path.join(betaRoot, "src/made-on-beta.ts"), "x");
    expect((await changed).sessionId).toBe(sessionId);
  }, 60_000);

  it("refuses paths outside the runner's roots, through a symlink too, and sessions outside them", async () => {
    const created = await createSession({ workspace: alphaRoot, runner: "alpha", yolo: true });
    const sessionId = created.body.id as string;
    fake.script(
      {
        toolCalls: [
          { id: "e1", name: "read_file", arguments: { path: path.join(outside, "secret.txt") } },
          { id: "e2", name: "read_file", arguments: { path: "escape/secret.txt" } },
          { id: "e3", name: "write_file", arguments: { path: "escape/planted.txt", content: "x" } },
        ],
      },
      { text: "Refused, as expected." },
    );
    const results = finished(await turn(sessionId, "try to leave"));
    expect(results).toHaveLength(3);
    for (const result of results) {
      expect(result.isError).toBe(true);
      expect(result.output).toContain("outside the folders this runner serves; the runner refused it");
    }
    await expect(fs.stat(path.join(outside, "planted.txt"))).rejects.toThrow();

    const escape = await createSession({ workspace: outside, runner: "alpha" });
    expect(escape.status).toBe(403);
    expect(escape.body.error.code).toBe("runner:outside_roots");
    const onBeta = await createSession({ workspace: alphaRoot, runner: "beta" });
    expect(onBeta.status).toBe(403);
    const unknown = await createSession({ workspace: alphaRoot, runner: "nobody" });
    expect(unknown.status).toBe(404);
  }, 60_000);

  it("fails a tool call whose runner was killed after the grace, keeps the transcript, and works again once the runner is back", async () => {
    const home = await tempDir("wl-runner-gamma-home-");
    const root = await tempDir("wl-runner-gamma-root-");
    const token = await enroll("gamma");
    const gamma = launch({ token, home, roots: [root] });
    await gamma.connected();
    const created = await createSession({ workspace: root, runner: "gamma", yolo: true });
    const sessionId = created.body.id as string;
    fake.script(
      { toolCalls: [{ id: "k1", name: "shell", arguments: { command: "echo started; sleep 60" } }] },
      { text: "The runner went away; I will wait." },
    );
    const response = hub.api("/api/v1/chat/stream", { body: { message: "run long", session_id: sessionId } });
    await waitFor(
      async () => {
        const events = (await (await hub.api(`/api/v1/sessions/${sessionId}/events?after=0`)).json()) as {
          type: string;
          payload: any;
        }[];
        return events.some((event) => event.type === "tool.progress" && String(event.payload.text).includes("started"));
      },
      20_000,
      "the command's first output",
    );
    const killedAt = Date.now();
    gamma.child.kill("SIGKILL");
    await readSse(await response);
    const waited = Date.now() - killedAt;
    expect(waited).toBeGreaterThanOrEqual(GRACE_MS - 100);
    const events = (await (await hub.api(`/api/v1/sessions/${sessionId}/events?after=0`)).json()) as {
      type: string;
      payload: any;
    }[];
    const [result] = finished(events);
    expect(result.isError).toBe(true);
    expect(result.output).toContain('The runner "gamma" disconnected and did not come back within 2 s');
    expect(events.map((event) => event.type)).toContain("turn.completed");
    // The model was told, in the tool result it got next.
    const toolMessage = (fake.requests.at(-1)!.body.messages as { role: string; content: string }[]).find(
      (message) => message.role === "tool",
    );
    expect(toolMessage?.content).toContain("did not come back");

    // The same runner, restarted: its saved credential gets it back in, and the session works again.
    const again = launch({ token, home, roots: [root] });
    await again.connected();
    fake.script({ toolCalls: [{ id: "k2", name: "shell", arguments: { command: "echo back" } }] }, { text: "Back." });
    const after = finished(await turn(sessionId, "again"));
    expect(after.find((state) => state.toolCallId === "k2")?.output).toContain("back");
  }, 90_000);

  it("drops a revoked runner at once and refuses its credential after", async () => {
    const home = await tempDir("wl-runner-delta-home-");
    const root = await tempDir("wl-runner-delta-root-");
    const token = await enroll("delta");
    const delta = launch({ token, home, roots: [root] });
    await delta.connected();
    const revoked = await hub.api("/api/v1/runners/delta", { method: "DELETE" });
    expect(revoked.status).toBe(200);
    const exit = await delta.exited;
    expect(exit.code, delta.stderr()).toBe(1);
    expect(delta.stderr()).toMatch(/refused by the hub/);
    const list = (await (await hub.api("/api/v1/runners")).json()) as { name: string }[];
    expect(list.map((runner) => runner.name)).not.toContain("delta");
    // Its saved credential (and the used token) no longer let it in.
    const retry = launch({ token, home, roots: [root] });
    expect((await retry.exited).code).toBe(1);
    const session = await createSession({ workspace: root, runner: "delta" });
    expect(session.status).toBe(404);
  }, 60_000);

  it("refuses bad handshakes, roots it was not given, and frames it cannot parse, and stays up", async () => {
    const dial = (auth: unknown) =>
      new Promise<string>((resolve) => {
        const socket = io(hub.url, {
          path: "/runner.io/",
          transports: ["websocket"],
          auth: auth as object,
          reconnection: false,
        });
        socket.on("connect", () => {
          socket.disconnect();
          resolve("connected");
        });
        socket.on("connect_error", (error) => resolve(error.message));
      });
    expect(await dial({ nonsense: true })).toMatch(/malformed handshake/);
    expect(await dial({ token: "wlr_enroll_guess", roots: ["/"], instance: "12345678", version: "x" })).toMatch(
      /bad_token|enrollment token/,
    );
    const pinned = await tempDir("wl-runner-pinned-");
    const token = await enroll("pinned", [pinned]);
    expect(await dial({ token, roots: ["/etc"], instance: "12345678", version: "x" })).toMatch(/outside the roots/);

    // A runner that answers requests it was never sent and sends garbage: refused and logged; the hub keeps serving.
    const epsilonToken = await enroll("epsilon");
    const socket = io(hub.url, {
      path: "/runner.io/",
      transports: ["websocket"],
      auth: { token: epsilonToken, roots: [pinned], instance: "abcdefgh", version: "x" },
      reconnection: false,
    });
    await new Promise<void>((resolve) => socket.on("runner.welcome", () => resolve()));
    socket.emit("runner.response", { id: "never-sent", ok: true, result: null });
    socket.emit("runner.response", { garbage: [1, 2, 3] });
    socket.emit("runner.output", { processId: "nope", chunk: "hi" });
    const health = await hub.api("/api/v1/health");
    expect(health.status).toBe(200);
    // A frame above the hub's limit (16 MB) closes that runner's connection, and only that one.
    const dropped = new Promise<string>((resolve) => socket.on("disconnect", (reason) => resolve(reason)));
    socket.emit("runner.response", { id: "huge", ok: true, result: "x".repeat(17 * 1024 * 1024) });
    expect(await dropped).toMatch(/transport (close|error)/);
    expect((await hub.api("/api/v1/health")).status).toBe(200);
    // The other runners' sessions still work.
    const created = await createSession({ workspace: betaRoot, runner: "beta", yolo: true });
    fake.script({ toolCalls: [{ id: "b1", name: "list_dir", arguments: {} }] }, { text: "ok" });
    const results = finished(await turn(created.body.id as string, "still there?"));
    expect(results[0]?.isError).toBe(false);
  }, 60_000);

  it("fences a runner on the session claim's epoch: a bridge whose claim was taken over is refused", async () => {
    const created = await createSession({ workspace: betaRoot, runner: "beta", yolo: true });
    const sessionId = created.body.id as string;
    const { db } = await store.openDb(hub.home, testDatabaseUrl(hub.home));
    try {
      fake.script({ toolCalls: [{ id: "f1", name: "list_dir", arguments: {} }] }, { text: "first" });
      expect(finished(await turn(sessionId, "first turn"))[0]?.isError).toBe(false);
      const first = (await store.sessionEpoch(db, sessionId))!;
      // Another owner takes the session over and lets go; the hub's next turn claims it again, higher.
      const { claim } = await store.claimSession(db, sessionId, "another-bridge", []);
      await store.releaseClaim(db, claim!);
      fake.script({ toolCalls: [{ id: "f2", name: "list_dir", arguments: {} }] }, { text: "second" });
      expect(finished(await turn(sessionId, "second turn"))[0]?.isError).toBe(false);
      const second = (await store.sessionEpoch(db, sessionId))!;
      expect(second).toBe(first + 2);

      // What the bridge that held the claim in between would send: the runner saw the turn's epoch, and refuses it.
      const file = path.join(betaRoot, "fenced.txt");
      await fs.writeFile(file, "x");
      const stale = hub.services.hosts.of("beta", { sessionId, epoch: first + 1 });
      const refused: unknown = await stale.stat(file).catch((error: unknown) => error);
      expect(refused).toMatchObject({ code: "runner:stale_epoch" });
      expect(String(refused)).toContain(`its claim is at epoch ${second}`);
      const current = hub.services.hosts.of("beta", { sessionId, epoch: second });
      expect((await current.stat(file))?.type).toBe("file");
    } finally {
      await db.$disconnect();
    }
  }, 60_000);

  it("renames a runner: its sessions follow and it reconnects under the new name", async () => {
    const created = await createSession({ workspace: betaRoot, runner: "beta", yolo: true });
    const sessionId = created.body.id as string;
    const renamed = await hub.api("/api/v1/runners/beta", { method: "PATCH", body: { name: "beta-2" } });
    expect(renamed.status).toBe(200);
    expect(await renamed.json()).toEqual({ name: "beta-2" });
    await beta.connected(2);
    expect(beta.stdout()).toContain(`Worldline runner beta-2 connected to ${hub.url}`);
    const list = (await (await hub.api("/api/v1/runners")).json()) as { name: string; connected: boolean }[];
    expect(list.find((runner) => runner.name === "beta-2")?.connected).toBe(true);
    expect(list.map((runner) => runner.name)).not.toContain("beta");
    const got = (await (await hub.api(`/api/v1/sessions/${sessionId}`)).json()) as { runner: string | null };
    expect(got.runner).toBe("beta-2");
    await fs.writeFile(path.join(betaRoot, "after-rename.txt"), "x");
    fake.script({ toolCalls: [{ id: "r1", name: "list_dir", arguments: {} }] }, { text: "renamed" });
    expect(finished(await turn(sessionId, "after the rename"))[0]?.output).toContain("after-rename.txt");
    // A name that is taken, and a runner that does not exist.
    expect((await hub.api("/api/v1/runners/beta-2", { method: "PATCH", body: { name: "alpha" } })).status).toBe(400);
    expect((await hub.api("/api/v1/runners/nobody", { method: "PATCH", body: { name: "x" } })).status).toBe(404);
  }, 60_000);

  // Last: people make this bridge a hub with named people.
  it("lets a member browse a connected runner's folders for a new session; a viewer may not", async () => {
    await fs.mkdir(path.join(alphaRoot, "project"), { recursive: true });
    const tokenOf = async (name: string, role: "member" | "viewer") => {
      const { user } = await hub.services.people.addUser({ name, role });
      return (await hub.services.people.createApiToken(user.id, { name: "test" })).token;
    };
    const as = async (token: string, pathname: string) =>
      hub.api(pathname, { headers: { authorization: `Bearer ${token}` } });
    const member = await tokenOf("mia", "member");
    const viewer = await tokenOf("val", "viewer");
    const listed = await as(member, "/api/v1/runners/alpha/folders");
    expect(listed.status).toBe(200);
    const listing = (await listed.json()) as { path: string; entries: { name: string }[] };
    expect(listing.path).toBe(alphaRoot);
    expect(listing.entries.map((entry) => entry.name)).toContain("project");
    // Still the runner's boundary: the member cannot climb out of its roots.
    const outsideListing = await as(member, `/api/v1/runners/alpha/folders?path=${encodeURIComponent(outside)}`);
    expect(outsideListing.status).toBeGreaterThanOrEqual(400);
    expect((await as(viewer, "/api/v1/runners/alpha/folders")).status).toBe(403);
    // Enrolling stays an admin's.
    const enroll = await hub.api("/api/v1/runners", {
      method: "POST",
      body: { name: "by-member" },
      headers: { authorization: `Bearer ${member}` },
    });
    expect(enroll.status).toBe(403);
  }, 30_000);
});
