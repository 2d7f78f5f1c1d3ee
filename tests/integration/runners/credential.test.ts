import fs from "node:fs/promises";
import path from "node:path";
import { io } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestBridge, waitFor, type TestBridge } from "../helpers";
import { startRunner, tempDir, type RunnerProcess } from "./support";

/**
 * A runner's credential (SECURITY.md, "What a runner reaches"): a copy used while the runner is
 * connected is refused and reported; it changes at every connection; it lives outside the roots.
 * Per-runner access, and the editor's save on a runner through a hard link.
 */

let hub: TestBridge;
let root: string;
let home: string;
let runner: RunnerProcess;
const started: RunnerProcess[] = [];
const tokens: Record<string, string> = {};

function launch(options: { token: string; home: string; roots: string[] }): RunnerProcess {
  const launched = startRunner({ hub: hub.url, name: "gamma", ...options });
  started.push(launched);
  return launched;
}

async function savedCredential(): Promise<string> {
  return (JSON.parse(await fs.readFile(path.join(home, "runner.json"), "utf8")) as { credential: string }).credential;
}

/** A handshake on /runner.io as a copy of the runner would make it: the connect error's message, or "connected". */
function dial(credential: string, instance = "thief-instance-1"): Promise<string> {
  return new Promise((resolve) => {
    const socket = io(hub.url, {
      path: "/runner.io/",
      transports: ["websocket"],
      auth: { credential, roots: [root], instance, version: "x" },
      reconnection: false,
    });
    socket.on("connect", () => {
      socket.disconnect();
      resolve("connected");
    });
    socket.on("connect_error", (error) => resolve(error.message));
  });
}

async function stopRunner(process: RunnerProcess): Promise<void> {
  process.child.kill("SIGTERM");
  await process.exited;
  await waitFor(
    async () => {
      const list = (await (await hub.api("/api/v1/runners")).json()) as { name: string; connected: boolean }[];
      return list.find((entry) => entry.name === "gamma")?.connected === false || null;
    },
    15_000,
    "the hub to see the runner go",
  );
}

function as(token: string, pathname: string, init: { method?: string; body?: unknown } = {}) {
  return fetch(`${hub.url}${pathname}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: {
      authorization: `Bearer ${token}`,
      ...(init.body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
}

beforeAll(async () => {
  hub = await startTestBridge();
  root = await tempDir("wl-cred-root-");
  home = await tempDir("wl-cred-home-");
  for (const [name, role] of [
    ["ann", "member"],
    ["ben", "member"],
  ] as const) {
    const { user } = await hub.services.people.addUser({ name, role, password: `${name}-password-1` });
    tokens[name] = (await hub.services.people.createApiToken(user.id, { name: "test" })).token;
  }
  runner = launch({ token: await hub.services.runners!.add("gamma"), home, roots: [root] });
  await runner.connected();
}, 90_000);
afterAll(async () => {
  for (const process of started) process.child.kill("SIGKILL");
  await hub?.stop();
});

describe("a runner's credential", () => {
  it("is kept outside the roots, readable by its user only", async () => {
    const stat = await fs.stat(path.join(home, "runner.json"));
    expect(stat.mode & 0o777).toBe(0o600);
    const inside = path.join(root, "wl-home");
    const refused = launch({ token: "unused-token-0123456789", home: inside, roots: [root] });
    const exit = await refused.exited;
    expect(exit.code).not.toBe(0);
    expect(refused.stderr()).toMatch(/credential file .* is inside the root/);
    await expect(fs.stat(path.join(inside, "runner.json"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("refuses a second connection with it while the runner is connected, and reports it to admins", async () => {
    const stolen = await savedCredential();
    expect(await dial(stolen)).toMatch(/runner:busy/);
    const list = (await (await hub.api("/api/v1/runners")).json()) as {
      name: string;
      connected: boolean;
      duplicate_at: string | null;
    }[];
    const gamma = list.find((entry) => entry.name === "gamma")!;
    expect(gamma.connected).toBe(true);
    expect(gamma.duplicate_at).not.toBeNull();
    // The refused copy changed nothing: the runner's own credential is still the one it holds.
    expect(await savedCredential()).toBe(stolen);
  });

  it("changes at every connection, and one two connections old no longer works", async () => {
    const first = await savedCredential();
    await stopRunner(runner);
    runner = launch({ token: "unused-token-0123456789", home, roots: [root] });
    await runner.connected();
    const second = await savedCredential();
    expect(second).not.toBe(first);
    await stopRunner(runner);
    runner = launch({ token: "unused-token-0123456789", home, roots: [root] });
    await runner.connected();
    const third = await savedCredential();
    expect(third).not.toBe(second);
    await stopRunner(runner);
    expect(await dial(first)).toMatch(/bad_credential/);
    runner = launch({ token: "unused-token-0123456789", home, roots: [root] });
    await runner.connected();
  }, 120_000);
});

describe("who may use a runner", () => {
  it("is everyone who may use runners until an admin names people or roles", async () => {
    expect((await as(tokens.ben, "/api/v1/sessions", { body: { workspace: root, runner: "gamma" } })).status).toBe(201);
    const set = await hub.api("/api/v1/runners/gamma", { method: "PATCH", body: { access: { people: ["ann"] } } });
    expect(set.status).toBe(200);
    // A member cannot change it.
    expect(
      (await as(tokens.ann, "/api/v1/runners/gamma", { method: "PATCH", body: { access: { roles: ["member"] } } }))
        .status,
    ).toBe(403);
    const refused = await as(tokens.ben, "/api/v1/sessions", { body: { workspace: root, runner: "gamma" } });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("runner:forbidden");
    expect((await as(tokens.ben, "/api/v1/runners/gamma/folders")).status).toBe(403);
    const listed = (await (await as(tokens.ben, "/api/v1/runners")).json()) as { name: string }[];
    expect(listed.map((entry) => entry.name)).not.toContain("gamma");
    expect((await as(tokens.ann, "/api/v1/sessions", { body: { workspace: root, runner: "gamma" } })).status).toBe(201);
    await hub.api("/api/v1/runners/gamma", { method: "PATCH", body: { access: {} } });
  });
});

describe("the editor's save on a runner", () => {
  it("refuses to write through a hard link to a file outside the runner's roots", async () => {
    const outside = await tempDir("wl-cred-outside-");
    const victim = path.join(outside, "victim.txt");
    await fs.writeFile(victim, "original\n");
    await fs.link(victim, path.join(root, "linked.txt"));
    const created = (await (
      await hub.api("/api/v1/sessions", { body: { workspace: root, runner: "gamma" } })
    ).json()) as {
      id: string;
    };
    const response = await hub.api(`/api/v1/sessions/${created.id}/files/content`, {
      method: "PUT",
      body: { path: "linked.txt", content: "overwritten\n", force: true },
    });
    expect(response.status).toBe(403);
    expect(await fs.readFile(victim, "utf8")).toBe("original\n");
  });
});
