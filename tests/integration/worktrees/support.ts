import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { TestBridge } from "../helpers";

/** Runs the real git in `cwd`; its stdout. */
export function sh(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** A repository with an identity of its own (the author commits take), one commit on `main`. */
export async function makeRepo(
  files: Record<string, string> = { "README.md": "hello\n", "src/a.txt": "one\ntwo\nthree\n" },
): Promise<string> {
  const repo = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-repo-")));
  sh(repo, "init", "-q", "-b", "main");
  sh(repo, "config", "user.name", "Ada Repo");
  sh(repo, "config", "user.email", "ada@example.test");
  sh(repo, "config", "commit.gpgsign", "false");
  for (const [name, text] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(repo, name)), { recursive: true });
    await fs.writeFile(path.join(repo, name), text);
  }
  sh(repo, "add", "-A");
  sh(repo, "commit", "-q", "-m", "first");
  return repo;
}

export interface SessionJson {
  id: string;
  title: string;
  workspace: string;
  archived: boolean;
  state: string;
  worktree: { path: string; branch: string; base: string; repo: string } | null;
  changes: { files: number; additions: number; deletions: number } | null;
}

export async function worktreeSession(
  bridge: TestBridge,
  repo: string,
  extra: Record<string, unknown> = {},
): Promise<SessionJson> {
  const response = await bridge.api("/api/v1/sessions", { body: { workspace: repo, isolation: "worktree", ...extra } });
  if (response.status !== 201)
    throw new Error(`creating the session failed: ${response.status} ${await response.text()}`);
  return (await response.json()) as SessionJson;
}

export async function session(bridge: TestBridge, id: string): Promise<SessionJson> {
  const response = await bridge.api(`/api/v1/sessions/${id}`);
  if (!response.ok) throw new Error(`GET session: ${response.status} ${await response.text()}`);
  return (await response.json()) as SessionJson;
}

/** POST a body; the status and the JSON answer. */
export async function post(
  bridge: TestBridge,
  pathname: string,
  body: unknown = {},
): Promise<{ status: number; json: any }> {
  const response = await bridge.api(pathname, { body });
  return { status: response.status, json: await response.json() };
}

/** Every file under `root` (not `.git`) with its bytes, and git's status: what "left exactly as it was" compares. */
export async function checkoutState(root: string): Promise<{ status: string; files: Record<string, string> }> {
  const files: Record<string, string> = {};
  const walk = async (dir: string) => {
    for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
      if (entry.name === ".git") continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else files[path.relative(root, full)] = (await fs.readFile(full)).toString("base64");
    }
  };
  await walk(root);
  return { status: sh(root, "status", "--porcelain=v1", "--untracked-files=all"), files };
}

export function branches(repo: string): string[] {
  return sh(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads").split("\n").filter(Boolean).sort();
}

export function worktreeList(repo: string): string {
  return sh(repo, "worktree", "list", "--porcelain");
}
