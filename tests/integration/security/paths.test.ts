import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { builtinTools, pathApproval, resolveInWorkspace, writeResolvedFile } from "../../../server/tools";
import { fakeCtx, makeWorkspace } from "../../unit/tools/support";
import { startTestBridge, type TestBridge } from "../helpers";

/**
 * The path guard of the agent's file tools (server/host/paths.ts) and of the HTTP
 * file routes (server/files/paths.ts) against every way out of a workspace.
 */
let env: Awaited<ReturnType<typeof makeWorkspace>>;
beforeEach(async () => {
  env = await makeWorkspace();
  await fs.writeFile(path.join(env.outside, "secret.txt"), "outside secret\n");
  await fs.writeFile(path.join(env.ws, "a.txt"), "inside\n");
});
afterEach(async () => env.cleanup());

const tool = (name: string) => builtinTools().find((t) => t.name === name)!;
const writeNeed = async (p: string) => tool("write_file").needsApproval({ path: p, content: "x" }, fakeCtx(env.ws));
const readNeed = async (p: string) => tool("read_file").needsApproval({ path: p }, fakeCtx(env.ws));

describe("agent path guard: ways out of the workspace need a human", () => {
  it.each([
    ["parent traversal", "../outside/secret.txt"],
    ["traversal through a subfolder", "sub/../../outside/secret.txt"],
    ["deep traversal", "a/b/c/../../../../outside/secret.txt"],
    ["absolute path elsewhere", "/etc/passwd"],
    ["home folder", "~"],
    ["file in home", "~/.bashrc"],
  ])("%s (%s) is outside and `always`", async (_what, input) => {
    const resolved = await resolveInWorkspace(env.ws, input);
    expect(resolved.inside).toBe(false);
    expect((await readNeed(input)).level).toBe("always");
    expect((await writeNeed(input)).level).toBe("always");
  });

  it("takes %2e%2e literally: an encoded form is a folder name, not a way up", async () => {
    const resolved = await resolveInWorkspace(env.ws, "%2e%2e/outside/secret.txt");
    expect(resolved.inside).toBe(true);
    expect(resolved.real).toBe(path.join(env.ws, "%2e%2e/outside/secret.txt"));
    const result = await tool("write_file").run({ path: "%2e%2e/x.txt", content: "y" }, fakeCtx(env.ws));
    expect(result.isError).toBe(false);
    expect(await fs.readFile(path.join(env.ws, "%2e%2e/x.txt"), "utf8")).toBe("y");
  });

  it("refuses NUL bytes", async () => {
    await expect(resolveInWorkspace(env.ws, "a.txt\0../../etc/passwd")).rejects.toThrow(/NUL/);
    const result = await tool("write_file").run({ path: "a.txt\0x", content: "y" }, fakeCtx(env.ws));
    expect(result.isError).toBe(true);
  });

  it("does not treat a sibling folder with the same prefix as inside", async () => {
    const sibling = `${env.ws}-evil`;
    await fs.mkdir(sibling);
    expect((await resolveInWorkspace(env.ws, `${sibling}/x`)).inside).toBe(false);
    expect((await resolveInWorkspace(env.ws, "../ws-evil/x")).inside).toBe(false);
  });

  it("follows symlinks, symlinked parents, dangling symlinks and chains", async () => {
    await fs.symlink(path.join(env.outside, "secret.txt"), path.join(env.ws, "link.txt"));
    await fs.symlink(env.outside, path.join(env.ws, "dir"));
    await fs.symlink(path.join(env.outside, "not-yet.txt"), path.join(env.ws, "dangling.txt"));
    await fs.symlink(path.join(env.ws, "dangling.txt"), path.join(env.ws, "chain.txt"));
    for (const input of ["link.txt", "dir/secret.txt", "dir/new/deeper.txt", "dangling.txt", "chain.txt"]) {
      const resolved = await resolveInWorkspace(env.ws, input);
      expect({ input, inside: resolved.inside }).toEqual({ input, inside: false });
      expect((await writeNeed(input)).level).toBe("always");
    }
  });

  it("reports a symlink loop instead of hanging", async () => {
    await fs.symlink(path.join(env.ws, "loop2"), path.join(env.ws, "loop1"));
    await fs.symlink(path.join(env.ws, "loop1"), path.join(env.ws, "loop2"));
    await expect(resolveInWorkspace(env.ws, "loop1")).rejects.toThrow(/symbolic links/);
  });

  it("asks a human before writing a hard-linked file (another name may be outside)", async () => {
    await fs.link(path.join(env.outside, "secret.txt"), path.join(env.ws, "hard.txt"));
    const resolved = await resolveInWorkspace(env.ws, "hard.txt");
    expect(resolved).toMatchObject({ inside: true, hardLinks: 2 });
    const need = await writeNeed("hard.txt");
    expect(need.level).toBe("always");
    expect(need.description).toMatch(/hard links/);
    expect(pathApproval(resolved, "write", "Edit").level).toBe("always");
    // Plain files inside still only ask (yolo may approve them).
    expect((await writeNeed("a.txt")).level).toBe("ask");
  });

  it("refuses a write when a hard link appeared after the check", async () => {
    const resolved = await resolveInWorkspace(env.ws, "later.txt");
    await fs.link(path.join(env.outside, "secret.txt"), path.join(env.ws, "later.txt"));
    await expect(writeResolvedFile(resolved, "pwned")).rejects.toThrow(/hard link/);
    expect(await fs.readFile(path.join(env.outside, "secret.txt"), "utf8")).toBe("outside secret\n");
  });

  it("refuses a write when the file became a symlink after the check (O_NOFOLLOW)", async () => {
    const resolved = await resolveInWorkspace(env.ws, "target.txt");
    await fs.symlink(path.join(env.outside, "secret.txt"), path.join(env.ws, "target.txt"));
    await expect(writeResolvedFile(resolved, "pwned")).rejects.toThrow(/symbolic link/);
    expect(await fs.readFile(path.join(env.outside, "secret.txt"), "utf8")).toBe("outside secret\n");
  });

  it("refuses a write when a folder was swapped for a symlink after the check (TOCTOU)", async () => {
    await fs.mkdir(path.join(env.ws, "src"));
    const resolved = await resolveInWorkspace(env.ws, "src/secret.txt");
    expect(resolved.inside).toBe(true);
    await fs.rm(path.join(env.ws, "src"), { recursive: true });
    await fs.symlink(env.outside, path.join(env.ws, "src"));
    await expect(writeResolvedFile(resolved, "pwned")).rejects.toThrow(/changed since it was checked/);
    expect(await fs.readFile(path.join(env.outside, "secret.txt"), "utf8")).toBe("outside secret\n");
  });

  it("refuses to run an approved inside write whose folder became a symlink to outside before it ran", async () => {
    await fs.mkdir(path.join(env.ws, "src"));
    const ctx = fakeCtx(env.ws, { toolCallId: "swap-1" });
    const args = { path: "src/secret.txt", content: "pwned" };
    const need = await tool("write_file").needsApproval(args, ctx);
    expect(need.level).toBe("ask");
    await fs.rm(path.join(env.ws, "src"), { recursive: true });
    await fs.symlink(env.outside, path.join(env.ws, "src"));
    for (const name of ["write_file", "str_replace"]) {
      const callArgs =
        name === "write_file"
          ? args
          : { path: "src/secret.txt", edits: [{ old_text: "outside secret", new_text: "pwned" }] };
      const callCtx = fakeCtx(env.ws, { toolCallId: `swap-${name}` });
      if (name === "str_replace") {
        // Approved while src was a real folder holding its own secret.txt.
        await fs.rm(path.join(env.ws, "src"));
        await fs.mkdir(path.join(env.ws, "src"));
        await fs.writeFile(path.join(env.ws, "src/secret.txt"), "outside secret\n");
        expect((await tool(name).needsApproval(callArgs, callCtx)).level).toBe("ask");
        await fs.rm(path.join(env.ws, "src"), { recursive: true });
        await fs.symlink(env.outside, path.join(env.ws, "src"));
        const result = await tool(name).run(callArgs, callCtx);
        expect(result.isError).toBe(true);
        expect(result.output).toMatch(/changed after it was approved/);
      } else {
        const result = await tool(name).run(args, ctx);
        expect(result.isError).toBe(true);
        expect(result.output).toMatch(/changed after it was approved/);
      }
    }
    expect(await fs.readFile(path.join(env.outside, "secret.txt"), "utf8")).toBe("outside secret\n");
  });

  it("flags sensitive files inside the workspace", async () => {
    for (const input of [".env", ".env.local", "config/.env", "id_rsa", "server.pem", ".git/config", ".npmrc"]) {
      expect({ input, level: (await readNeed(input)).level }).toEqual({ input, level: "always" });
    }
  });
});

describe("HTTP file routes: the same ways out are refused", () => {
  let bridge: TestBridge;
  let sessionId: string;
  let outside: string;
  beforeAll(async () => {
    bridge = await startTestBridge();
    outside = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-outside-")));
    await fs.writeFile(path.join(outside, "secret.txt"), "outside secret\n");
    await fs.writeFile(path.join(bridge.workspace, "ok.txt"), "ok\n");
    await fs.symlink(outside, path.join(bridge.workspace, "linkdir"));
    await fs.symlink(path.join(outside, "missing.txt"), path.join(bridge.workspace, "dangling.txt"));
    await fs.mkdir(`${bridge.workspace}-evil`, { recursive: true });
    await fs.writeFile(`${bridge.workspace}-evil/x.txt`, "sibling\n");
    const created = await bridge.api("/api/v1/sessions", { body: { workspace: bridge.workspace } });
    sessionId = ((await created.json()) as { id: string }).id;
  });
  afterAll(async () => {
    await bridge.stop();
    await fs.rm(outside, { recursive: true, force: true });
  });

  const escapes = [
    "../secret.txt",
    "..%2fsecret.txt",
    "%2e%2e/secret.txt",
    "linkdir/secret.txt",
    "linkdir/new.txt",
    "dangling.txt",
    "../" + "x/".repeat(3) + "../../../etc/passwd",
    "a.txt\u0000../../etc/passwd",
  ];

  it("never reads outside the workspace, whatever the encoding", async () => {
    const evilName = path.basename(bridge.workspace) + "-evil/x.txt";
    for (const p of [...escapes, `../${evilName}`, `${outside}/secret.txt`, "/etc/passwd", "~/.bashrc"]) {
      const response = await bridge.api(`/api/v1/sessions/${sessionId}/files/content?path=${encodeURIComponent(p)}`);
      const body = await response.text();
      expect({ p, ok: response.status < 400 && /outside secret|sibling|root:/.test(body) }).toEqual({ p, ok: false });
      expect(response.status, p).toBeLessThan(500);
    }
  });

  it("never writes outside the workspace", async () => {
    for (const p of escapes.filter((e) => !e.includes("%"))) {
      const response = await bridge.api(`/api/v1/sessions/${sessionId}/files/content`, {
        method: "PUT",
        body: { path: p, content: "pwned" },
      });
      expect(response.status, p).toBeGreaterThanOrEqual(400);
      expect(response.status, p).toBeLessThan(500);
    }
    expect(await fs.readFile(path.join(outside, "secret.txt"), "utf8")).toBe("outside secret\n");
    await expect(fs.access(path.join(outside, "missing.txt"))).rejects.toThrow();
    await expect(fs.access(path.join(outside, "new.txt"))).rejects.toThrow();
  });

  it("takes encoded dots in a JSON body literally: the file lands inside, under that name", async () => {
    const response = await bridge.api(`/api/v1/sessions/${sessionId}/files/content`, {
      method: "PUT",
      body: { path: "%2e%2e/enc.txt", content: "lit" },
    });
    expect(response.status).toBe(200);
    expect(await fs.readFile(path.join(bridge.workspace, "%2e%2e", "enc.txt"), "utf8")).toBe("lit");
  });
});
