import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { readSse, startTestBridge, waitFor, type TestBridge } from "../helpers";
import { makeRepo, post, session, sh, worktreeList, worktreeSession } from "../worktrees/support";
import { startRunner, tempDir, type RunnerProcess } from "./support";

/** A worktree session on a runner: git, the folder, the setup, the stat, shipping and keeping, all on its machine. */
describe("a worktree session on a runner", () => {
  let fake: FakeLlm;
  let hub: TestBridge;
  let runner: RunnerProcess;
  let runnerHome: string;
  let repo: string;

  beforeAll(async () => {
    fake = await startFakeLlm();
    hub = await startTestBridge({ llmUrl: fake.url });
    // The repository the runner serves (its root), with a setup and an ignored file the setup writes.
    repo = await makeRepo({
      "README.md": "hello\n",
      ".gitignore": ".setup-ran\n",
      ".worldline/worldline.json": JSON.stringify({
        setup: 'pwd > .setup-ran && echo "$WORLDLINE_HOME" >> .setup-ran',
      }),
    });
    runnerHome = await tempDir("wl-runner-wt-home-");
    // Git's identity comes from the runner's HOME alone: a commit by "Runner Ruth" was made on the runner.
    sh(repo, "config", "--unset", "user.name");
    sh(repo, "config", "--unset", "user.email");
    await fs.writeFile(
      path.join(runnerHome, ".gitconfig"),
      "[user]\n\tname = Runner Ruth\n\temail = ruth@runner.test\n[commit]\n\tgpgsign = false\n",
    );
    const token = await hub.services.runners!.add("delta");
    runner = startRunner({ hub: hub.url, token, home: runnerHome, roots: [repo], env: { HOME: runnerHome } });
    await runner.connected();
  }, 60_000);

  afterAll(async () => {
    runner?.child.kill("SIGKILL");
    await hub?.stop();
    await fake?.close();
  });

  it("makes, ships, archives and restores the worktree on the runner's machine, under the runner's own home", async () => {
    const created = await worktreeSession(hub, repo, { runner: "delta", yolo: true, title: "Agent note" });
    const wt = created.worktree!.path;
    expect(created.workspace).toBe(wt);
    expect(created.worktree).toMatchObject({ repo, base: "main" });
    expect(created.worktree!.branch).toMatch(/^worldline\/agent-note-[0-9a-f]{8}$/);
    // In the runner's WORLDLINE_HOME, not in the repository nor in the hub's home.
    expect(path.dirname(wt)).toBe(path.join(runnerHome, "worktrees"));
    expect(wt.startsWith(repo + path.sep)).toBe(false);
    expect(wt.startsWith(hub.home + path.sep)).toBe(false);
    expect(sh(wt, "rev-parse", "--abbrev-ref", "HEAD").trim()).toBe(created.worktree!.branch);
    expect(worktreeList(repo)).toContain(`worktree ${wt}\n`);
    // The runner serves that folder for this session only: another session may not open there.
    const intruder = await hub.api("/api/v1/sessions", { body: { workspace: wt, runner: "delta" } });
    expect(intruder.status).toBe(403);
    expect(((await intruder.json()) as { error: { code: string } }).error.code).toBe("workspace:forbidden");

    // The setup ran in a terminal on the runner: in the worktree, with the runner's environment.
    const ran = await waitFor(
      () => fs.readFile(path.join(wt, ".setup-ran"), "utf8").catch(() => null),
      20_000,
      "the setup",
    );
    expect(ran).toBe(`${wt}\n${runnerHome}\n`);

    // The agent writes a file there (a write_file on the runner); the Changes stat counts it.
    fake.script(
      {
        toolCalls: [
          { name: "write_file", arguments: { path: "notes/agent.txt", content: "from the agent\nline two\n" } },
        ],
      },
      { text: "written" },
    );
    const turn = await hub.api("/api/v1/chat/stream", { body: { message: "write a note", session_id: created.id } });
    expect(turn.status).toBe(200);
    await readSse(turn);
    expect(await fs.readFile(path.join(wt, "notes/agent.txt"), "utf8")).toBe("from the agent\nline two\n");
    await expect(fs.stat(path.join(repo, "notes"))).rejects.toMatchObject({ code: "ENOENT" });
    const counted = await waitFor(
      async () => {
        const now = await session(hub, created.id);
        return now.changes?.files === 1 ? now : null;
      },
      15_000,
      "the diff stat after the turn",
    );
    expect(counted.changes).toEqual({ files: 1, additions: 2, deletions: 0 });
    expect(counted.state).toBe("review");

    // Commit on the branch, then a squash merge into main, whose checkout follows.
    const committed = await post(hub, `/api/v1/sessions/${created.id}/commit`, { message: "Add the agent's note" });
    expect(committed.status).toBe(200);
    expect(sh(wt, "rev-parse", "HEAD").trim()).toBe(committed.json.sha);
    expect(sh(wt, "log", "-1", "--format=%s|%an").trim()).toBe("Add the agent's note|Runner Ruth");
    const before = sh(repo, "rev-parse", "main").trim();
    const merged = await post(hub, `/api/v1/sessions/${created.id}/merge`, { strategy: "squash" });
    expect(merged.status).toBe(200);
    expect(sh(repo, "rev-parse", "main").trim()).toBe(merged.json.sha);
    expect(sh(repo, "rev-list", "--parents", "-1", "main").trim().split(" ")).toEqual([merged.json.sha, before]);
    expect(sh(repo, "log", "-1", "--format=%s|%an", "main").trim()).toBe("Agent note|Runner Ruth");
    expect(await fs.readFile(path.join(repo, "notes/agent.txt"), "utf8")).toBe("from the agent\nline two\n");
    expect(sh(repo, "status", "--porcelain")).toBe("");
    expect((await session(hub, created.id)).changes).toEqual({ files: 0, additions: 0, deletions: 0 });

    // Archive: refused while an untracked file would be lost, then forced; the folder goes, the branch stays.
    await fs.writeFile(path.join(wt, "scratch.txt"), "not committed\n");
    const refused = await post(hub, `/api/v1/sessions/${created.id}/archive`, {});
    expect(refused.status).toBe(409);
    expect(refused.json.error).toMatchObject({
      code: "worktree:unmerged",
      details: { commits: [], files: ["scratch.txt"] },
    });
    const archived = await post(hub, `/api/v1/sessions/${created.id}/archive`, { force: true });
    expect(archived.status).toBe(200);
    expect(archived.json.snapshot).toMatch(/^[0-9a-f]{40}$/);
    await expect(fs.stat(wt)).rejects.toMatchObject({ code: "ENOENT" });
    expect(worktreeList(repo)).not.toContain(wt);
    expect(sh(repo, "branch", "--list", created.worktree!.branch).trim()).not.toBe("");
    expect((await session(hub, created.id)).archived).toBe(true);

    // Restore: the folder back on its branch, the snapshot (taken by the runner) over it.
    const restored = await post(hub, `/api/v1/sessions/${created.id}/restore`, {});
    expect(restored.status).toBe(200);
    expect(restored.json).toEqual({ restored: true, path: wt });
    expect(sh(wt, "rev-parse", "--abbrev-ref", "HEAD").trim()).toBe(created.worktree!.branch);
    expect(await fs.readFile(path.join(wt, "scratch.txt"), "utf8")).toBe("not committed\n");
    expect(await fs.readFile(path.join(wt, "notes/agent.txt"), "utf8")).toBe("from the agent\nline two\n");
    const back = await session(hub, created.id);
    expect(back.archived).toBe(false);
    expect(back.changes).toEqual({ files: 1, additions: 1, deletions: 0 });
  }, 120_000);

  it("refuses a worktree of a folder outside the runner's roots, leaving nothing behind", async () => {
    const elsewhere = await makeRepo();
    const response = await hub.api("/api/v1/sessions", {
      body: { workspace: elsewhere, isolation: "worktree", runner: "delta" },
    });
    expect(response.status).toBe(403);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("runner:outside_roots");
    expect(worktreeList(elsewhere).match(/^worktree /gm)).toHaveLength(1);
  });
});
