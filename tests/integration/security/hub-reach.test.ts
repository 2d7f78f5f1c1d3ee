import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestBridge, type TestBridge } from "../helpers";

/**
 * What a member, an admin and the hub's operator reach on the hub's own machine (
 * SECURITY.md "Who reaches what"): where sessions may run, WORLDLINE_HOME through the editor's
 * routes, and the editor's save through a hard link.
 */

let hub: TestBridge;
/** Holds both the hub's WORLDLINE_HOME and the admin's workspace: a session there could reach the data folder. */
let parent: string;
let home: string;
let hubRoot: string;
/** Outside every workspace: what a hard link inside one must not let the editor overwrite. */
let outsideDir: string;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  parent = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-reach-")));
  home = path.join(parent, "home");
  await fs.mkdir(home);
  hubRoot = path.join(parent, "projects");
  await fs.mkdir(path.join(hubRoot, "app"), { recursive: true });
  outsideDir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-outside-")));
  hub = await startTestBridge({ home, env: { WORLDLINE_HUB_ROOTS: hubRoot } });
  for (const [name, role] of [
    ["amy", "admin"],
    ["mel", "member"],
  ] as const) {
    await hub.services.people.addUser({ name, role, password: `${name}-password-1` });
    tokens[name] = (await hub.services.people.createApiToken((await userId(name))!, { name: "test" })).token;
  }
});
afterAll(async () => {
  await hub?.stop();
  await fs.rm(parent, { recursive: true, force: true });
  await fs.rm(outsideDir, { recursive: true, force: true });
});

async function userId(name: string): Promise<string | undefined> {
  return (await hub.services.people.listUsers()).find((user) => user.name === name)?.id;
}

/** A request as a person's personal token, or as the operator (the launch token) when `as` is undefined. */
function call(pathname: string, init: { as?: string; method?: string; body?: unknown } = {}): Promise<Response> {
  if (init.as === undefined) return hub.api(pathname, init);
  return fetch(`${hub.url}${pathname}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: {
      authorization: `Bearer ${init.as}`,
      ...(init.body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
}

async function createSession(as: string | undefined, body: Record<string, unknown>) {
  const response = await call("/api/v1/sessions", { as, body });
  return { status: response.status, body: (await response.json()) as { id?: string; error?: { code: string } } };
}

describe("where sessions may run on the hub's machine", () => {
  it("refuses a member's session outside WORLDLINE_HUB_ROOTS, and takes one under them", async () => {
    const outside = await createSession(tokens.mel, { workspace: hub.workspace });
    expect(outside.status).toBe(403);
    expect(outside.body.error?.code).toBe("workspace:forbidden");
    const inHome = await createSession(tokens.mel, { workspace: home });
    expect(inHome.status).toBe(403);
    const under = await createSession(tokens.mel, { workspace: path.join(hubRoot, "app") });
    expect(under.status).toBe(201);
  });

  it("refuses a session in WORLDLINE_HOME or below it to everyone, admins and the operator included", async () => {
    for (const as of [tokens.amy, undefined]) {
      for (const workspace of [home, path.join(home, "run")]) {
        await fs.mkdir(workspace, { recursive: true });
        const refused = await createSession(as, { workspace });
        expect(refused.status).toBe(403);
        expect(refused.body.error?.code).toBe("workspace:forbidden");
      }
    }
    // An admin may use the hub's machine elsewhere.
    expect((await createSession(tokens.amy, { workspace: hub.workspace })).status).toBe(201);
  });

  it("gives an external agent's command line on the hub's machine to admins only", async () => {
    const workspace = path.join(hubRoot, "app");
    const member = await createSession(tokens.mel, { workspace, agentCommand: "env" });
    expect(member.status).toBe(403);
    expect(member.body.error?.code).toBe("auth:forbidden");
    const chat = await call("/api/v1/chat/stream", { as: tokens.mel, body: { message: "hi", workspace: outsideDir } });
    expect(chat.status).toBe(403);
    expect((await createSession(tokens.amy, { workspace, agentCommand: "env" })).status).toBe(201);
  });
});

describe("WORLDLINE_HOME through the editor's routes", () => {
  let sessionId: string;
  beforeAll(async () => {
    // The operator's session on the folder that holds WORLDLINE_HOME (a single user's $HOME is like this).
    const created = await createSession(undefined, { workspace: parent });
    expect(created.status).toBe(201);
    sessionId = created.body.id!;
  });

  it("refuses to read the bridge's database or its keys, as a path outside the workspace", async () => {
    for (const file of ["home/worldline.db", "home/provider-keys.json", "home"]) {
      const response = await call(`/api/v1/sessions/${sessionId}/files/content?path=${encodeURIComponent(file)}`);
      expect(response.status).toBe(403);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("files:forbidden");
    }
    const write = await call(`/api/v1/sessions/${sessionId}/files/content`, {
      method: "PUT",
      body: { path: "home/planted.txt", content: "x" },
    });
    expect(write.status).toBe(403);
    await expect(fs.stat(path.join(home, "planted.txt"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("leaves WORLDLINE_HOME out of the file tree and the file search", async () => {
    const tree = (await (await call(`/api/v1/sessions/${sessionId}/files/tree`)).json()) as {
      entries: { name: string }[];
    };
    expect(tree.entries.map((entry) => entry.name)).toContain("projects");
    expect(tree.entries.map((entry) => entry.name)).not.toContain("home");
    const listing = await call(`/api/v1/sessions/${sessionId}/files/tree?dir=home`);
    expect(listing.status).toBe(403);
    const search = (await (await call(`/api/v1/sessions/${sessionId}/files/search?q=worldline`)).json()) as {
      files: string[];
    };
    expect(search.files.filter((file) => file.startsWith("home/"))).toEqual([]);
  });

  it("the agent's tools refuse it too, whatever an approval would say", async () => {
    const session = await hub.services.sessions.get(sessionId);
    const host = hub.services.hosts.of(session.runner);
    await expect(host.resolve(parent, "home/worldline.db")).rejects.toMatchObject({ code: "fs:outside_workspace" });
    await expect(host.resolve(parent, path.join(home, "provider-keys.json"))).rejects.toMatchObject({
      code: "fs:outside_workspace",
    });
    const found = await host.glob(parent, "**/*.db", new AbortController().signal);
    expect(found.filter((match) => match.absolute.startsWith(home))).toEqual([]);
  });
});

describe("the editor's save and hard links", () => {
  it("refuses to write through a hard link, so a file outside the workspace stays as it was", async () => {
    const created = await createSession(tokens.amy, { workspace: hub.workspace });
    const outsideFile = path.join(outsideDir, "victim.txt");
    await fs.writeFile(outsideFile, "original\n");
    await fs.link(outsideFile, path.join(hub.workspace, "linked.txt"));
    const response = await call(`/api/v1/sessions/${created.body.id}/files/content`, {
      as: tokens.amy,
      method: "PUT",
      body: { path: "linked.txt", content: "overwritten\n", force: true },
    });
    expect(response.status).toBe(403);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("files:forbidden");
    expect(await fs.readFile(outsideFile, "utf8")).toBe("original\n");
    // A file with one name saves as before.
    await fs.writeFile(path.join(hub.workspace, "plain.txt"), "a\n");
    const plain = await call(`/api/v1/sessions/${created.body.id}/files/content`, {
      as: tokens.amy,
      method: "PUT",
      body: { path: "plain.txt", content: "b\n", force: true },
    });
    expect(plain.status).toBe(200);
    expect(await fs.readFile(path.join(hub.workspace, "plain.txt"), "utf8")).toBe("b\n");
  });
});
