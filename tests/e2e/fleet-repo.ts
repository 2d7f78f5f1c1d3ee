import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { freshWorkspace } from "./fixtures";

/** Real git for the fleet's specs: the user's repository and a bare remote. */

export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8" }).trim();
}

/** A repository with one commit on `main`, an author in its config, and a bare repository as `origin`. */
export async function makeRepo(): Promise<{ repo: string; remote: string }> {
  const repo = await freshWorkspace("fleet-repo");
  const remote = `${await freshWorkspace("fleet-remote")}/origin.git`;
  git(path.dirname(remote), "init", "--bare", "-q", remote);
  git(repo, "init", "-q", "-b", "main");
  git(repo, "config", "user.name", "Fleet Tester");
  git(repo, "config", "user.email", "fleet@example.test");
  await fs.writeFile(path.join(repo, "README.md"), "# fleet\n");
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", "First commit");
  git(repo, "remote", "add", "origin", remote);
  return { repo, remote };
}
