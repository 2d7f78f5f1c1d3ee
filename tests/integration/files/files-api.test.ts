import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emitCommand, startTestBridge, type TestBridge } from "../helpers";

let bridge: TestBridge;
let sessionId: string;

beforeAll(async () => {
  bridge = await startTestBridge();
  const ws = bridge.workspace;
  await fs.mkdir(path.join(ws, "src"), { recursive: true });
  await fs.mkdir(path.join(ws, "node_modules/pkg"), { recursive: true });
  await fs.mkdir(path.join(ws, "logs"), { recursive: true });
  await fs.writeFile(path.join(ws, ".gitignore"), "logs/\n*.tmp\n");
  await fs.writeFile(path.join(ws, "src/app.ts"), "export const a = 1;\n");
  await fs.writeFile(path.join(ws, "src/util-helpers.ts"), "export {};\n");
  await fs.writeFile(path.join(ws, "scratch.tmp"), "x");
  await fs.writeFile(path.join(ws, "logs/a.log"), "x");
  await fs.writeFile(path.join(ws, "node_modules/pkg/index.js"), "x");
  execFileSync("git", ["init", "-q"], { cwd: ws });
  execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", "add", "src/app.ts", ".gitignore"], { cwd: ws });
  execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"], { cwd: ws });
  const created = await bridge.api("/api/v1/sessions", { body: { workspace: ws } });
  sessionId = ((await created.json()) as { id: string }).id;
});

afterAll(async () => {
  await bridge.stop();
});

const json = async <T>(response: Response): Promise<T> => (await response.json()) as T;

describe("workspace files over HTTP", () => {
  it("lists the tree without what git ignores and .git; ignored=1 shows the ignored, marked", async () => {
    const root = await json<{ entries: { name: string; type: string }[] }>(
      await bridge.api(`/api/v1/sessions/${sessionId}/files/tree`),
    );
    // node_modules is not in this .gitignore: only git's word hides a folder from the tree.
    expect(root.entries.map((e) => e.name)).toEqual(["node_modules", "src", ".gitignore"]);
    const all = await json<{ entries: { name: string; ignored?: boolean }[] }>(
      await bridge.api(`/api/v1/sessions/${sessionId}/files/tree?ignored=1`),
    );
    expect(all.entries.map((e) => [e.name, e.ignored ?? false])).toEqual([
      ["logs", true],
      ["node_modules", false],
      ["src", false],
      [".gitignore", false],
      ["scratch.tmp", true],
    ]);
    expect((await bridge.api(`/api/v1/sessions/${sessionId}/files/tree?ignored=yes`)).status).toBe(400);
    const src = await json<{ entries: { path: string }[] }>(
      await bridge.api(`/api/v1/sessions/${sessionId}/files/tree?dir=src`),
    );
    expect(src.entries.map((e) => e.path)).toEqual(["src/app.ts", "src/util-helpers.ts"]);
  });

  it("refuses paths outside the workspace", async () => {
    const response = await bridge.api(
      `/api/v1/sessions/${sessionId}/files/content?path=${encodeURIComponent("../../etc/passwd")}`,
    );
    expect(response.status).toBe(403);
  });

  it("saves with the loaded hash and answers 409 when the file changed on disk", async () => {
    const base = `/api/v1/sessions/${sessionId}/files/content`;
    const file = await json<{ content: string; hash: string }>(await bridge.api(`${base}?path=src/app.ts`));
    expect(file.content).toBe("export const a = 1;\n");
    const saved = await bridge.api(base, {
      method: "PUT",
      body: { path: "src/app.ts", content: "export const a = 2;\n", baseHash: file.hash },
    });
    expect(saved.status).toBe(200);
    const { hash } = await json<{ hash: string }>(saved);
    await fs.writeFile(path.join(bridge.workspace, "src/app.ts"), "changed by the agent\n");
    const stale = await bridge.api(base, {
      method: "PUT",
      body: { path: "src/app.ts", content: "mine\n", baseHash: hash },
    });
    expect(stale.status).toBe(409);
    expect(((await stale.json()) as { error: { code: string } }).error.code).toBe("files:conflict");
    const forced = await bridge.api(base, {
      method: "PUT",
      body: { path: "src/app.ts", content: "mine\n", baseHash: hash, force: true },
    });
    expect(forced.status).toBe(200);
    expect(await fs.readFile(path.join(bridge.workspace, "src/app.ts"), "utf8")).toBe("mine\n");
  });

  it("finds files by fuzzy query, ignoring what the tree ignores", async () => {
    const found = await json<{ files: string[] }>(
      await bridge.api(`/api/v1/sessions/${sessionId}/files/search?q=uhelp`),
    );
    expect(found.files[0]).toBe("src/util-helpers.ts");
    const all = await json<{ files: string[] }>(await bridge.api(`/api/v1/sessions/${sessionId}/files/search?q=`));
    expect(all.files.some((f) => f.includes("node_modules") || f.startsWith("logs/") || f.endsWith(".tmp"))).toBe(
      false,
    );
  });

  it("reports git markers for modified and untracked files", async () => {
    const status = await json<{ repo: boolean; markers: Record<string, string> }>(
      await bridge.api(`/api/v1/sessions/${sessionId}/files/git`),
    );
    expect(status.repo).toBe(true);
    expect(status.markers["src/app.ts"]).toBe("M");
    expect(status.markers["src/util-helpers.ts"]).toBe("U");
  });

  it("sends files.changed to a watching tab when a listed folder changes", async () => {
    const socket = await bridge.socket();
    await emitCommand(socket, "files.watch", { sessionId });
    await bridge.api(`/api/v1/sessions/${sessionId}/files/tree?dir=src`);
    // The earlier tests' writes to src/app.ts may still be in the debounce window, and
    // reach this new watcher first: wait for the report that names the new file.
    const changed = new Promise<{ sessionId: string; paths: string[] }>((resolve) => {
      const onChanged = (message: { sessionId: string; paths: string[] }) => {
        if (!message.paths.includes("src/new-file.ts")) return;
        socket.off("files.changed", onChanged);
        resolve(message);
      };
      socket.on("files.changed", onChanged);
    });
    await fs.writeFile(path.join(bridge.workspace, "src/new-file.ts"), "x");
    const message = await changed;
    expect(message.sessionId).toBe(sessionId);
  });
});

describe("settings over HTTP", () => {
  it("stores the API key in a 0600 file and only shows a hint", async () => {
    const saved = await bridge.api("/api/v1/settings/providers", {
      body: {
        kind: "deepseek",
        name: "DeepSeek",
        baseURL: "https://api.deepseek.com/v1",
        apiKey: "sk-secret-abcdef123456",
        models: [
          { id: "deepseek-chat", contextWindow: 131072, capabilities: { tools: true, images: false, thinking: false } },
        ],
      },
    });
    const text = await saved.text();
    expect(saved.status).toBe(200);
    expect(text).not.toContain("secret-abcdef");
    const view = JSON.parse(text) as { providers: { id: string; hasKey: boolean; keyHint: string }[] };
    expect(view.providers[0]).toMatchObject({ id: "deepseek", hasKey: true, keyHint: "sk-…3456" });
    const stat = await fs.stat(path.join(bridge.home, "provider-keys.json"));
    expect(stat.mode & 0o777).toBe(0o600);
    await bridge.api("/api/v1/settings/default-model", {
      method: "PUT",
      body: { providerId: "deepseek", model: "deepseek-chat" },
    });
    const resolved = await bridge.services.settings.resolveDefaultModel();
    expect(resolved).toMatchObject({ apiKey: "sk-secret-abcdef123456", model: "deepseek-chat", contextWindow: 131072 });
  });

  it("persists the IDE layout on the server", async () => {
    const layout = {
      treeWidth: 250,
      agentWidth: 480,
      bottomHeight: 200,
      treeOpen: true,
      bottomOpen: false,
      theme: "light",
    };
    expect((await bridge.api("/api/v1/settings/layout", { method: "PUT", body: layout })).status).toBe(200);
    expect(await json(await bridge.api("/api/v1/settings/layout"))).toEqual({ layout });
  });

  it("reports an unreachable provider in test connection", async () => {
    const result = await json<{ ok: boolean; message: string }>(
      await bridge.api("/api/v1/settings/test-connection", { body: { baseURL: "http://127.0.0.1:1/v1" } }),
    );
    expect(result.ok).toBe(false);
    expect(result.message).toMatch(/Cannot reach/);
  });
});

describe("session list extras", () => {
  it("searches titles and content, and deletes a session", async () => {
    await bridge.api(`/api/v1/sessions/${sessionId}`, {
      method: "PATCH",
      body: { title: "Refactor the zebra parser" },
    });
    const found = await json<{ ids: string[] }>(await bridge.api("/api/v1/sessions-search?q=zebra"));
    expect(found.ids).toEqual([sessionId]);
    const deleted = await bridge.api(`/api/v1/sessions/${sessionId}`, { method: "DELETE" });
    expect(deleted.status).toBe(200);
    expect((await bridge.api(`/api/v1/sessions/${sessionId}`)).status).toBe(404);
  });
});

describe("default model from the settings", () => {
  it("runs a turn with the settings' default model when the environment names none", async () => {
    const { startFakeLlm } = await import("../../fake-llm/server");
    const fake = await startFakeLlm();
    const plain = await startTestBridge();
    try {
      await plain.api("/api/v1/settings/providers", {
        body: {
          id: "local",
          kind: "vllm",
          name: "Local",
          baseURL: fake.url,
          models: [
            { id: "fake-model", contextWindow: 32000, capabilities: { tools: true, images: false, thinking: false } },
          ],
        },
      });
      await plain.api("/api/v1/settings/default-model", {
        method: "PUT",
        body: { providerId: "local", model: "fake-model" },
      });
      const session = (await (
        await plain.api("/api/v1/sessions", { body: { workspace: plain.workspace } })
      ).json()) as { id: string };
      fake.script({ text: "Hello from the settings model" });
      const socket = await plain.socket();
      await emitCommand(socket, "session.subscribe", { sessionId: session.id });
      const done = new Promise<void>((resolve) =>
        socket.on(
          "session.events",
          (m: { events: { type: string }[] }) => m.events.some((e) => e.type === "turn.completed") && resolve(),
        ),
      );
      await emitCommand(socket, "turn.prompt", {
        commandId: "cmd-settings-model-1",
        sessionId: session.id,
        text: "hi",
      });
      await done;
      const events = (await (await plain.api(`/api/v1/sessions/${session.id}/events`)).json()) as {
        type: string;
        payload: { delta?: string };
      }[];
      expect(
        events
          .filter((e) => e.type === "message.part.delta")
          .map((e) => e.payload.delta)
          .join(""),
      ).toBe("Hello from the settings model");
      expect(fake.requests.at(-1)?.body).toMatchObject({ model: "fake-model" });
    } finally {
      await plain.stop();
      await fake.close();
    }
  });
});
