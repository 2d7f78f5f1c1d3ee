import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { builtinTools, pathApproval, resolveInWorkspace } from "../../../server/tools";
import { fakeCtx, makeWorkspace, write } from "./support";

let env: Awaited<ReturnType<typeof makeWorkspace>>;
beforeEach(async () => {
  env = await makeWorkspace();
});
afterEach(async () => env.cleanup());

const tool = (name: string) => builtinTools().find((t) => t.name === name)!;

describe("resolveInWorkspace", () => {
  it("keeps plain relative paths inside, including files that do not exist yet", async () => {
    const resolved = await resolveInWorkspace(env.ws, "src/new/file.ts");
    expect(resolved).toMatchObject({
      inside: true,
      display: "src/new/file.ts",
      real: path.join(env.ws, "src/new/file.ts"),
    });
  });

  it("accepts an absolute path that points inside the workspace", async () => {
    expect((await resolveInWorkspace(env.ws, path.join(env.ws, "a.txt"))).inside).toBe(true);
  });

  it("treats .. escapes as outside", async () => {
    expect((await resolveInWorkspace(env.ws, "../x")).inside).toBe(false);
    expect((await resolveInWorkspace(env.ws, "src/../../outside/x")).inside).toBe(false);
  });

  it("treats absolute paths elsewhere as outside", async () => {
    expect((await resolveInWorkspace(env.ws, "/etc/passwd")).inside).toBe(false);
  });

  it("expands ~ to the home folder, which is outside", async () => {
    const resolved = await resolveInWorkspace(env.ws, "~/notes.txt");
    expect(resolved.real).toBe(path.join(os.homedir(), "notes.txt"));
    expect(resolved.inside).toBe(false);
  });

  it("treats a sibling folder sharing the prefix (/ws vs /ws-evil) as outside", async () => {
    await fs.mkdir(`${env.ws}-evil`);
    expect((await resolveInWorkspace(env.ws, `${env.ws}-evil/x`)).inside).toBe(false);
    expect((await resolveInWorkspace(env.ws, "../ws-evil/x")).inside).toBe(false);
  });

  it("rejects NUL bytes", async () => {
    await expect(resolveInWorkspace(env.ws, "a\0b")).rejects.toThrow(/NUL/);
  });

  it("follows a symlinked file that points outside", async () => {
    await write(path.join(env.outside, "secret.txt"), "s");
    await fs.symlink(path.join(env.outside, "secret.txt"), path.join(env.ws, "link.txt"));
    const resolved = await resolveInWorkspace(env.ws, "link.txt");
    expect(resolved.inside).toBe(false);
    expect(resolved.real).toBe(path.join(env.outside, "secret.txt"));
  });

  it("follows a symlinked parent folder for a file that does not exist yet", async () => {
    await fs.symlink(env.outside, path.join(env.ws, "out"));
    expect((await resolveInWorkspace(env.ws, "out/new/deeper.txt")).inside).toBe(false);
  });

  it("follows a dangling symlink to where a write would land", async () => {
    await fs.symlink(path.join(env.outside, "not-yet"), path.join(env.ws, "dangling"));
    const resolved = await resolveInWorkspace(env.ws, "dangling");
    expect(resolved.inside).toBe(false);
    expect(resolved.real).toBe(path.join(env.outside, "not-yet"));
  });

  it("follows a chain of symlinks", async () => {
    await fs.symlink(env.outside, path.join(env.ws, "hop2"));
    await fs.symlink(path.join(env.ws, "hop2"), path.join(env.ws, "hop1"));
    expect((await resolveInWorkspace(env.ws, "hop1/x")).inside).toBe(false);
  });

  it("does not let .. after a symlink sneak back in lexically", async () => {
    await fs.mkdir(path.join(env.outside, "deep"), { recursive: true });
    await fs.symlink(path.join(env.outside, "deep"), path.join(env.ws, "d"));
    // Lexically ws/d/../x is ws/x; the tools operate on that same resolved path, so it is inside.
    const resolved = await resolveInWorkspace(env.ws, "d/../x");
    expect(resolved.real).toBe(path.join(env.ws, "x"));
  });

  it("keeps a symlink that stays inside the workspace inside", async () => {
    await write(path.join(env.ws, "real.txt"), "r");
    await fs.symlink(path.join(env.ws, "real.txt"), path.join(env.ws, "alias.txt"));
    expect((await resolveInWorkspace(env.ws, "alias.txt")).inside).toBe(true);
  });

  it("reports a symlink loop as an error", async () => {
    await fs.symlink(path.join(env.ws, "loop-b"), path.join(env.ws, "loop-a"));
    await fs.symlink(path.join(env.ws, "loop-a"), path.join(env.ws, "loop-b"));
    await expect(resolveInWorkspace(env.ws, "loop-a/x")).rejects.toThrow(/symbolic links/);
  });

  it.each([
    [".env", ".env file"],
    [".env.local", ".env file"],
    ["config/.env.production", ".env file"],
    ["id_rsa", "private key"],
    ["keys/id_ed25519", "private key"],
    ["certs/server.pem", "private key or certificate store"],
    ["tls/server.key", "private key or certificate store"],
    [".git/config", "git internals"],
    [".git/hooks/pre-commit", "git internals"],
    [".npmrc", "credentials file"],
  ])("marks %s as sensitive (%s)", async (input, reason) => {
    expect((await resolveInWorkspace(env.ws, input)).sensitive).toBe(reason);
  });

  it("marks ~/.ssh as sensitive", async () => {
    expect((await resolveInWorkspace(env.ws, "~/.ssh/config")).sensitive).toBe("SSH folder");
  });

  it("marks a symlink to a sensitive file as sensitive", async () => {
    await write(path.join(env.ws, ".env"), "KEY=1");
    await fs.symlink(path.join(env.ws, ".env"), path.join(env.ws, "innocent.txt"));
    expect((await resolveInWorkspace(env.ws, "innocent.txt")).sensitive).toBe(".env file");
  });

  it("does not mark ordinary files, .gitignore or public keys as sensitive", async () => {
    for (const input of ["src/index.ts", ".gitignore", "id_rsa.pub", "environment.md", "keyboard.ts"]) {
      expect((await resolveInWorkspace(env.ws, input)).sensitive, input).toBeUndefined();
    }
  });
});

describe("pathApproval", () => {
  it("needs nothing to read inside, asks to write inside, and always asks outside or for secrets", async () => {
    const inside = await resolveInWorkspace(env.ws, "a.txt");
    expect(pathApproval(inside, "read", "Read").level).toBe("none");
    expect(pathApproval(inside, "write", "Write").level).toBe("ask");
    expect(pathApproval(await resolveInWorkspace(env.ws, "../x"), "read", "Read").level).toBe("always");
    expect(pathApproval(await resolveInWorkspace(env.ws, ".env"), "read", "Read").level).toBe("always");
  });

  it("scopes a session allowance to the edited file's folder", async () => {
    expect(pathApproval(await resolveInWorkspace(env.ws, "src/a/b.ts"), "write", "Write").scope).toBe("src/a/**");
  });
});

describe("file tools at the workspace boundary", () => {
  it("a write to ../x needs an approval yolo cannot give", async () => {
    const need = await tool("write_file").needsApproval({ path: "../x", content: "hi" }, fakeCtx(env.ws));
    expect(need.level).toBe("always");
    expect(need.description).toMatch(/outside the workspace/);
  });

  it("a write through a symlinked folder out of the workspace needs an approval yolo cannot give", async () => {
    await fs.symlink(env.outside, path.join(env.ws, "out"));
    const need = await tool("write_file").needsApproval({ path: "out/evil.sh", content: "x" }, fakeCtx(env.ws));
    expect(need.level).toBe("always");
  });

  it("an edit of .env needs an approval yolo cannot give", async () => {
    await write(path.join(env.ws, ".env"), "A=1\n");
    const need = await tool("str_replace").needsApproval(
      { path: ".env", edits: [{ old_text: "A=1", new_text: "A=2" }] },
      fakeCtx(env.ws),
    );
    expect(need.level).toBe("always");
  });

  it("reading inside the workspace needs nothing; reading outside always asks", async () => {
    await write(path.join(env.ws, "a.txt"), "a");
    expect((await tool("read_file").needsApproval({ path: "a.txt" }, fakeCtx(env.ws))).level).toBe("none");
    expect((await tool("read_file").needsApproval({ path: "/etc/hostname" }, fakeCtx(env.ws))).level).toBe("always");
    expect((await tool("list_dir").needsApproval({ path: ".." }, fakeCtx(env.ws))).level).toBe("always");
    expect((await tool("grep").needsApproval({ pattern: "x", path: "~" }, fakeCtx(env.ws))).level).toBe("always");
    expect((await tool("glob").needsApproval({ pattern: "*", path: "../outside" }, fakeCtx(env.ws))).level).toBe(
      "always",
    );
  });

  it("writes land at the resolved path (the approved one), not elsewhere", async () => {
    await fs.symlink(env.outside, path.join(env.ws, "out"));
    const result = await tool("write_file").run({ path: "out/approved.txt", content: "yes" }, fakeCtx(env.ws));
    expect(result.isError).toBe(false);
    expect(await fs.readFile(path.join(env.outside, "approved.txt"), "utf8")).toBe("yes");
  });
});
