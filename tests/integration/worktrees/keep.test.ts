import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestBridge, type TestBridge } from "../helpers";
import { checkWorktrees } from "../../../server/worktrees";
import { openDb } from "../../../server/store";
import { testDatabaseUrl } from "../../db";
import { branches, checkoutState, makeRepo, post, session, sh, worktreeList, worktreeSession } from "./support";

describe("worktree sessions: archive, restore, delete, doctor", () => {
  let bridge: TestBridge;
  beforeAll(async () => {
    bridge = await startTestBridge();
  });
  const closers: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closers) await close();
    await bridge?.stop();
  });

  it("refuses to archive unmerged work and says exactly what would be lost; force archives, restore brings it back byte for byte", async () => {
    const repo = await makeRepo();
    const created = await worktreeSession(bridge, repo);
    const wt = created.worktree!.path;
    const branch = created.worktree!.branch;
    await fs.writeFile(path.join(wt, "committed.txt"), "kept on the branch\n");
    const { json: commit } = await post(bridge, `/api/v1/sessions/${created.id}/commit`, { message: "keep me" });
    await fs.writeFile(path.join(wt, "src/a.txt"), "uncommitted edit\n");
    await fs.mkdir(path.join(wt, "notes"));
    await fs.writeFile(path.join(wt, "notes/untracked.md"), "never added\n");
    await fs.writeFile(path.join(wt, "blob.bin"), Buffer.from([0, 1, 2, 255, 254, 10, 13, 0]));
    await fs.rm(path.join(wt, "README.md"));
    const before = await checkoutState(wt);

    const refused = await post(bridge, `/api/v1/sessions/${created.id}/archive`, {});
    expect(refused.status).toBe(409);
    expect(refused.json.error.code).toBe("worktree:unmerged");
    expect(refused.json.error.details.commits).toEqual([{ sha: commit.sha, subject: "keep me" }]);
    expect([...refused.json.error.details.files].sort()).toEqual([
      "README.md",
      "blob.bin",
      "notes/untracked.md",
      "src/a.txt",
    ]);
    expect(await checkoutState(wt)).toEqual(before);

    const archived = await post(bridge, `/api/v1/sessions/${created.id}/archive`, { force: true });
    expect(archived.status).toBe(200);
    await expect(fs.stat(wt)).rejects.toThrow();
    expect(branches(repo)).toContain(branch);
    expect(worktreeList(repo)).not.toContain(wt);
    const gone = await session(bridge, created.id);
    expect([gone.archived, gone.state]).toEqual([true, "archived"]);
    const listed = (await (await bridge.api("/api/v1/sessions")).json()) as { id: string }[];
    expect(listed.some((item) => item.id === created.id)).toBe(false);
    const all = (await (await bridge.api("/api/v1/sessions?archived=1")).json()) as { id: string }[];
    expect(all.some((item) => item.id === created.id)).toBe(true);

    const restored = await post(bridge, `/api/v1/sessions/${created.id}/restore`, {});
    expect(restored.status).toBe(200);
    expect(await checkoutState(wt)).toEqual(before);
    expect(sh(wt, "rev-parse", "HEAD").trim()).toBe(commit.sha);
    const back = await session(bridge, created.id);
    expect(back.archived).toBe(false);
    expect(back.state).toBe("review");
  });

  it("deleting a session with a worktree follows the same rule, and keeps the branch", async () => {
    const repo = await makeRepo();
    const created = await worktreeSession(bridge, repo);
    const wt = created.worktree!.path;
    await fs.writeFile(path.join(wt, "wip.txt"), "work in progress\n");
    const refused = await bridge.api(`/api/v1/sessions/${created.id}`, { method: "DELETE" });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as any).error.details.files).toEqual(["wip.txt"]);
    expect(await fs.readFile(path.join(wt, "wip.txt"), "utf8")).toBe("work in progress\n");
    const forced = await bridge.api(`/api/v1/sessions/${created.id}?force=1`, { method: "DELETE" });
    expect(forced.status).toBe(200);
    await expect(fs.stat(wt)).rejects.toThrow();
    expect(branches(repo)).toContain(created.worktree!.branch);
    expect((await bridge.api(`/api/v1/sessions/${created.id}`)).status).toBe(404);

    const clean = await worktreeSession(bridge, repo);
    expect((await bridge.api(`/api/v1/sessions/${clean.id}`, { method: "DELETE" })).status).toBe(200);
    await expect(fs.stat(clean.worktree!.path)).rejects.toThrow();
  });

  it("PATCH {archived} of a worktree session archives and restores by the same rule", async () => {
    const repo = await makeRepo();
    const created = await worktreeSession(bridge, repo);
    const wt = created.worktree!.path;
    const patch = (query: string, body: unknown) =>
      bridge.api(`/api/v1/sessions/${created.id}${query}`, { method: "PATCH", body });
    await fs.writeFile(path.join(wt, "wip.txt"), "work in progress\n");
    await fs.mkdir(path.join(wt, "notes"));
    await fs.writeFile(path.join(wt, "notes/untracked.md"), "never added\n");
    const before = await checkoutState(wt);

    const refused = await patch("", { archived: true, title: "renamed" });
    expect(refused.status).toBe(409);
    const error = ((await refused.json()) as any).error;
    expect(error.code).toBe("worktree:unmerged");
    expect([...error.details.files].sort()).toEqual(["notes/untracked.md", "wip.txt"]);
    expect(await checkoutState(wt)).toEqual(before);
    const untouched = await session(bridge, created.id);
    expect([untouched.archived, untouched.title]).toEqual([false, created.title]); // nothing of the PATCH applied

    const forced = await patch("?force=1", { archived: true, title: "renamed" });
    expect(forced.status).toBe(200);
    expect(((await forced.json()) as any).archived).toBe(true);
    await expect(fs.stat(wt)).rejects.toThrow();
    expect(worktreeList(repo)).not.toContain(wt);
    expect(branches(repo)).toContain(created.worktree!.branch);
    const archived = await session(bridge, created.id);
    expect([archived.archived, archived.state, archived.title]).toEqual([true, "archived", "renamed"]);

    const restored = await patch("", { archived: false });
    expect(restored.status).toBe(200);
    expect(await checkoutState(wt)).toEqual(before);
    expect((await session(bridge, created.id)).archived).toBe(false);
  });

  it("doctor finds a vanished worktree folder and prunes only that entry; a broken link is repaired", async () => {
    const repo = await makeRepo();
    const userTree = path.join(path.dirname(repo), `${path.basename(repo)}-users-own`);
    sh(repo, "worktree", "add", "-q", userTree, "-b", "users-own");
    await fs.rm(userTree, { recursive: true, force: true }); // the user's own stale worktree: not ours to prune
    const vanished = await worktreeSession(bridge, repo);
    const broken = await worktreeSession(bridge, repo);
    await fs.rm(vanished.worktree!.path, { recursive: true, force: true });
    // A worktree whose .git file points nowhere: git's link broken, the files there.
    const dotGit = path.join(broken.worktree!.path, ".git");
    const link = await fs.readFile(dotGit, "utf8");
    await fs.writeFile(dotGit, "gitdir: /nonexistent/worktrees/x\n");

    const { db } = await openDb(bridge.home, testDatabaseUrl(bridge.home));
    closers.push(() => db.$disconnect());
    const found = await checkWorktrees(db, { fix: false });
    const kinds = Object.fromEntries(found.map((finding) => [finding.sessionId, finding.kind]));
    expect(kinds[vanished.id]).toBe("worktree_vanished");
    expect(kinds[broken.id]).toBe("worktree_broken");

    const fixed = await checkWorktrees(db, { fix: true });
    const vanishedFinding = fixed.find((finding) => finding.sessionId === vanished.id)!;
    expect(vanishedFinding.fixed).toBe(true);
    expect(fixed.find((finding) => finding.sessionId === broken.id)!.fixed).toBe(true);
    expect(await fs.readFile(dotGit, "utf8")).toBe(link);
    expect(await checkWorktrees(db, { fix: false })).toEqual([]);
    const list = worktreeList(repo);
    expect(list).not.toContain(vanished.worktree!.path);
    expect(list).toContain(userTree);
    expect((await session(bridge, vanished.id)).archived).toBe(true);
    expect(branches(repo)).toContain(vanished.worktree!.branch);
    // The vanished session comes back from its kept branch.
    const restored = await post(bridge, `/api/v1/sessions/${vanished.id}/restore`, {});
    expect(restored.status).toBe(200);
    expect(await fs.readFile(path.join(vanished.worktree!.path, "README.md"), "utf8")).toBe("hello\n");
  });
});
