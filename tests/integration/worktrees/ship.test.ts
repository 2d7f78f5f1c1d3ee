import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestBridge, waitFor, type TestBridge } from "../helpers";
import { localHost } from "../../../server/host";
import { gitHostOf } from "../../../server/worktrees/git";
import { applyMerge, prepareMerge } from "../../../server/worktrees/merge";
import { compareUrl } from "../../../server/worktrees";
import { checkoutState, makeRepo, post, session, sh, worktreeSession } from "./support";

async function edit(root: string, file: string, text: string): Promise<void> {
  await fs.mkdir(path.dirname(path.join(root, file)), { recursive: true });
  await fs.writeFile(path.join(root, file), text);
}

describe("worktree sessions: commit, merge, push", () => {
  let bridge: TestBridge;
  beforeAll(async () => {
    bridge = await startTestBridge();
  });
  afterAll(() => bridge?.stop());

  it("commits everything on the branch, author from the repository's config; a summary message without a model", async () => {
    const repo = await makeRepo();
    const created = await worktreeSession(bridge, repo);
    const wt = created.worktree!.path;
    await edit(wt, "src/a.txt", "one\nTWO\nthree\nfour\n");
    await edit(wt, "new/file.txt", "fresh\n");

    const stat = await waitFor(async () => {
      await bridge.services.worktrees!.refreshChanges(created.id);
      const now = await session(bridge, created.id);
      return now.changes!.files === 2 ? now : null;
    });
    expect(stat.changes).toEqual({ files: 2, additions: 3, deletions: 1 });
    expect(stat.state).toBe("review");

    const committed = await post(bridge, `/api/v1/sessions/${created.id}/commit`, {});
    expect(committed.status).toBe(200);
    expect(committed.json.message_by).toBe("summary");
    expect(committed.json.message).toMatch(/^Update new\/file\.txt, src\/a\.txt/);
    expect(sh(wt, "rev-parse", "HEAD").trim()).toBe(committed.json.sha);
    expect(sh(wt, "log", "-1", "--format=%an <%ae>|%cn").trim()).toBe("Ada Repo <ada@example.test>|Ada Repo");
    expect(sh(wt, "status", "--porcelain")).toBe("");
    expect(sh(repo, "rev-parse", "main").trim()).not.toBe(committed.json.sha);

    const again = await post(bridge, `/api/v1/sessions/${created.id}/commit`, { message: "nothing" });
    expect([again.status, again.json.error.code]).toEqual([409, "commit:nothing"]);

    await edit(wt, "src/a.txt", "mine\n");
    const given = await post(bridge, `/api/v1/sessions/${created.id}/commit`, { message: "Say mine\n\nBecause." });
    expect(given.json).toMatchObject({ message: "Say mine\n\nBecause.", message_by: "user" });
  });

  it("squash-merges into the base in the main checkout; the session then counts no changes and is idle", async () => {
    const repo = await makeRepo();
    const created = await worktreeSession(bridge, repo, { title: "Shout two" });
    const wt = created.worktree!.path;
    const old = sh(repo, "rev-parse", "main").trim();
    await edit(wt, "src/a.txt", "one\nTWO\nthree\n");
    await post(bridge, `/api/v1/sessions/${created.id}/commit`, { message: "shout" });
    await edit(wt, "b.txt", "bee\n");
    await post(bridge, `/api/v1/sessions/${created.id}/commit`, { message: "bee" });

    const merged = await post(bridge, `/api/v1/sessions/${created.id}/merge`, { strategy: "squash" });
    expect(merged.status).toBe(200);
    expect(merged.json.base).toBe("main");
    expect(sh(repo, "rev-parse", "main").trim()).toBe(merged.json.sha);
    expect(sh(repo, "rev-list", "--parents", "-1", "main").trim().split(" ")).toEqual([merged.json.sha, old]);
    expect(sh(repo, "log", "-1", "--format=%s", "main").trim()).toBe("Shout two");
    // The main checkout has main checked out: its files follow, and it stays clean.
    expect(await fs.readFile(path.join(repo, "src/a.txt"), "utf8")).toBe("one\nTWO\nthree\n");
    expect(await fs.readFile(path.join(repo, "b.txt"), "utf8")).toBe("bee\n");
    expect(sh(repo, "status", "--porcelain")).toBe("");
    const after = await session(bridge, created.id);
    expect(after.changes).toEqual({ files: 0, additions: 0, deletions: 0 });
    expect(after.state).toBe("idle");
    // A branch Worldline squash-merged counts as merged: archive needs no force.
    const archived = await post(bridge, `/api/v1/sessions/${created.id}/archive`, {});
    expect(archived.status).toBe(200);
  });

  it("makes a merge commit with strategy merge, into a base not checked out anywhere", async () => {
    const repo = await makeRepo();
    sh(repo, "branch", "release");
    const created = await worktreeSession(bridge, repo, { base: "release" });
    const wt = created.worktree!.path;
    await edit(wt, "c.txt", "sea\n");
    const { json: commit } = await post(bridge, `/api/v1/sessions/${created.id}/commit`, { message: "sea" });
    const before = await checkoutState(repo);
    const merged = await post(bridge, `/api/v1/sessions/${created.id}/merge`, { strategy: "merge" });
    expect(merged.status).toBe(200);
    const parents = sh(repo, "rev-list", "--parents", "-1", "release").trim().split(" ");
    expect(parents).toHaveLength(3);
    expect(parents[2]).toBe(commit.sha);
    expect(await checkoutState(repo)).toEqual(before);
    expect((await session(bridge, created.id)).changes!.files).toBe(0);
  });

  it("leaves the main checkout exactly as it was on a conflict, and names the paths", async () => {
    const repo = await makeRepo();
    const created = await worktreeSession(bridge, repo);
    const wt = created.worktree!.path;
    await edit(wt, "src/a.txt", "one\nfrom the branch\nthree\n");
    await post(bridge, `/api/v1/sessions/${created.id}/commit`, { message: "branch side" });
    await edit(repo, "src/a.txt", "one\nfrom main\nthree\n");
    sh(repo, "commit", "-q", "-am", "main side");
    await edit(repo, "untracked.txt", "mine\n");
    await edit(repo, "README.md", "edited, not committed\n");
    const before = await checkoutState(repo);
    const head = sh(repo, "rev-parse", "main").trim();

    const merged = await post(bridge, `/api/v1/sessions/${created.id}/merge`, { strategy: "squash" });
    expect(merged.status).toBe(409);
    expect(merged.json.error.code).toBe("merge:conflict");
    expect(merged.json.error.paths).toEqual(["src/a.txt"]);
    expect(await checkoutState(repo)).toEqual(before);
    expect(sh(repo, "rev-parse", "main").trim()).toBe(head);

    // Ask the agent to resolve: the base comes into the worktree, and a prompt starts there.
    const resolving = await post(bridge, `/api/v1/sessions/${created.id}/resolve`, {});
    expect(resolving.status).toBe(200);
    expect(resolving.json.conflicts).toEqual(["src/a.txt"]);
    expect(typeof resolving.json.task_id).toBe("string");
    expect(await fs.readFile(path.join(wt, "src/a.txt"), "utf8")).toContain("<<<<<<<");
    const events = (await (await bridge.api(`/api/v1/sessions/${created.id}/events`)).json()) as any[];
    const started = await waitFor(async () =>
      ((await (await bridge.api(`/api/v1/sessions/${created.id}/events`)).json()) as any[]).find(
        (event) => event.type === "turn.started",
      ),
    );
    expect(started.payload.prompt).toContain("- src/a.txt");
    expect(events.length).toBeGreaterThan(0);
    expect(await checkoutState(repo)).toEqual(before);
  });

  it("refuses (409 merge:dirty) when the main checkout has uncommitted changes to a path the merge changes", async () => {
    const repo = await makeRepo();
    const created = await worktreeSession(bridge, repo);
    await edit(created.worktree!.path, "src/a.txt", "changed by the agent\n");
    await post(bridge, `/api/v1/sessions/${created.id}/commit`, { message: "agent" });
    await edit(repo, "src/a.txt", "the user's unsaved work\n");
    const before = await checkoutState(repo);
    const merged = await post(bridge, `/api/v1/sessions/${created.id}/merge`, { strategy: "squash" });
    expect([merged.status, merged.json.error.code, merged.json.error.paths]).toEqual([
      409,
      "merge:dirty",
      ["src/a.txt"],
    ]);
    expect(await checkoutState(repo)).toEqual(before);
    // Uncommitted changes elsewhere do not stand in the way, and stay.
    await edit(repo, "src/a.txt", "one\ntwo\nthree\n");
    await edit(repo, "README.md", "unrelated edit\n");
    const ok = await post(bridge, `/api/v1/sessions/${created.id}/merge`, { strategy: "squash" });
    expect(ok.status).toBe(200);
    expect(await fs.readFile(path.join(repo, "src/a.txt"), "utf8")).toBe("changed by the agent\n");
    expect(await fs.readFile(path.join(repo, "README.md"), "utf8")).toBe("unrelated edit\n");
  });

  it("refuses a merge into a base someone else moved meanwhile (409 merge:base_moved)", async () => {
    const repo = await makeRepo();
    const created = await worktreeSession(bridge, repo);
    await edit(created.worktree!.path, "d.txt", "dee\n");
    await post(bridge, `/api/v1/sessions/${created.id}/commit`, { message: "dee" });
    const input = { repo, branch: created.worktree!.branch, base: "main", strategy: "squash" as const, title: "t" };
    const here = gitHostOf(localHost);
    const prepared = await prepareMerge(here, input);
    await edit(repo, "other.txt", "someone else\n");
    sh(repo, "add", "-A");
    sh(repo, "commit", "-q", "-m", "moved");
    const moved = sh(repo, "rev-parse", "main").trim();
    const before = await checkoutState(repo);
    await expect(applyMerge(here, input, prepared)).rejects.toMatchObject({ code: "merge:base_moved" });
    expect(sh(repo, "rev-parse", "main").trim()).toBe(moved);
    expect(await checkoutState(repo)).toEqual(before);
  });

  it("lets one of two merges of the same session at once win; the other gets 409", async () => {
    const repo = await makeRepo();
    const created = await worktreeSession(bridge, repo);
    await edit(created.worktree!.path, "e.txt", "e\n");
    await post(bridge, `/api/v1/sessions/${created.id}/commit`, { message: "e" });
    const old = sh(repo, "rev-parse", "main").trim();
    const both = await Promise.all([
      post(bridge, `/api/v1/sessions/${created.id}/merge`, { strategy: "squash" }),
      post(bridge, `/api/v1/sessions/${created.id}/merge`, { strategy: "squash" }),
    ]);
    const statuses = both.map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, 409]);
    const winner = both.find((answer) => answer.status === 200)!;
    expect(sh(repo, "rev-list", "--parents", "-1", "main").trim()).toBe(`${winner.json.sha} ${old}`);
  });

  it("pushes the branch to a bare remote and gives the compare URL for a GitHub remote", async () => {
    const repo = await makeRepo();
    const bare = await fs.mkdtemp(path.join(os.tmpdir(), "wl-bare-"));
    sh(bare, "init", "-q", "--bare");
    sh(repo, "remote", "add", "origin", "https://github.com/acme/widget.git");
    // git pushes to the bare repository while the remote's URL stays GitHub's (what the compare URL reads).
    sh(repo, "config", `url.${bare}.pushInsteadOf`, "https://github.com/acme/widget.git");
    const created = await worktreeSession(bridge, repo);
    await edit(created.worktree!.path, "f.txt", "f\n");
    const { json: commit } = await post(bridge, `/api/v1/sessions/${created.id}/commit`, { message: "f" });
    const pushed = await post(bridge, `/api/v1/sessions/${created.id}/push`, {});
    expect(pushed.status).toBe(200);
    const branch = created.worktree!.branch;
    expect(pushed.json).toEqual({
      remote: "origin",
      branch,
      compare_url: `https://github.com/acme/widget/compare/main...${encodeURIComponent(branch)}?expand=1`,
    });
    expect(sh(bare, "rev-parse", `refs/heads/${branch}`).trim()).toBe(commit.sha);
    // Pushed counts as kept: archive needs no force.
    expect((await post(bridge, `/api/v1/sessions/${created.id}/archive`, {})).status).toBe(200);
  });

  it("reports a remote that refuses the push, and a remote that does not exist", async () => {
    const repo = await makeRepo();
    const bare = await fs.mkdtemp(path.join(os.tmpdir(), "wl-bare-"));
    sh(bare, "init", "-q", "--bare");
    await fs.writeFile(
      path.join(bare, "hooks/pre-receive"),
      "#!/bin/sh\necho 'pushes are closed today' >&2\nexit 1\n",
      {
        mode: 0o755,
      },
    );
    sh(repo, "remote", "add", "closed", bare);
    const created = await worktreeSession(bridge, repo);
    await edit(created.worktree!.path, "g.txt", "g\n");
    await post(bridge, `/api/v1/sessions/${created.id}/commit`, { message: "g" });
    const refused = await post(bridge, `/api/v1/sessions/${created.id}/push`, { remote: "closed" });
    expect([refused.status, refused.json.error.code]).toEqual([502, "push:refused"]);
    expect(refused.json.error.message).toContain("pushes are closed today");
    const unknown = await post(bridge, `/api/v1/sessions/${created.id}/push`, { remote: "nowhere" });
    expect([unknown.status, unknown.json.error.code]).toEqual([400, "push:bad_ref"]);
    const bad = await post(bridge, `/api/v1/sessions/${created.id}/push`, { remote: "--upload-pack=x" });
    expect(bad.status).toBe(400);
  });

  it("builds compare URLs for GitHub, GitLab and Bitbucket remotes, and none for others", () => {
    const branch = "worldline/fix-1";
    expect(compareUrl("git@github.com:acme/widget.git", branch, "main")).toBe(
      "https://github.com/acme/widget/compare/main...worldline%2Ffix-1?expand=1",
    );
    expect(compareUrl("ssh://git@gitlab.com/group/sub/widget.git", branch, "main")).toBe(
      "https://gitlab.com/group/sub/widget/-/merge_requests/new?merge_request%5Bsource_branch%5D=worldline%2Ffix-1&merge_request%5Btarget_branch%5D=main",
    );
    expect(compareUrl("https://user@bitbucket.org/acme/widget.git", branch, "main")).toBe(
      "https://bitbucket.org/acme/widget/pull-requests/new?source=worldline%2Ffix-1&dest=main",
    );
    expect(compareUrl("/srv/git/widget.git", branch, "main")).toBeNull();
    expect(compareUrl("https://git.example.com/acme/widget.git", branch, "main")).toBeNull();
  });
});
