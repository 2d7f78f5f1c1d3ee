import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestBridge, waitFor, type TestBridge } from "../helpers";
import {
  branches,
  checkoutState,
  makeRepo,
  post,
  session,
  sh,
  worktreeList,
  worktreeSession,
  type SessionJson,
} from "./support";

describe("worktree sessions: creation", () => {
  let bridge: TestBridge;
  beforeAll(async () => {
    bridge = await startTestBridge();
  });
  afterAll(() => bridge?.stop());

  it("makes a worktree on a new branch under WORLDLINE_HOME and works there, leaving the user's checkout alone", async () => {
    const repo = await makeRepo();
    const before = await checkoutState(repo);
    const created = await worktreeSession(bridge, repo, { title: "Fix the login test!" });

    expect(created.worktree).not.toBeNull();
    const worktree = created.worktree!;
    expect(worktree.repo).toBe(repo);
    expect(worktree.base).toBe("main");
    expect(worktree.branch).toMatch(/^worldline\/fix-the-login-test-[0-9a-f]{8}$/);
    expect(worktree.path.startsWith(path.join(await fs.realpath(bridge.home), "worktrees") + path.sep)).toBe(true);
    expect(path.basename(worktree.path)).toMatch(new RegExp(`^${path.basename(repo)}-[0-9a-f]{8}$`));
    expect(created.workspace).toBe(worktree.path);
    expect(created.title).toBe("Fix the login test!");
    expect(created.state).toBe("idle");
    expect(created.changes).toEqual({ files: 0, additions: 0, deletions: 0 });
    expect(sh(worktree.path, "rev-parse", "--abbrev-ref", "HEAD").trim()).toBe(worktree.branch);
    expect(await fs.readFile(path.join(worktree.path, "src/a.txt"), "utf8")).toBe("one\ntwo\nthree\n");
    expect(await checkoutState(repo)).toEqual(before);

    const listed = (await (await bridge.api("/api/v1/sessions")).json()) as SessionJson[];
    const mine = listed.find((item) => item.id === created.id)!;
    expect(mine.worktree).toEqual(worktree);
    expect(mine.state).toBe("idle");
    const plain = await (await bridge.api("/api/v1/sessions", { body: { workspace: repo } })).json();
    expect(plain.worktree).toBeNull();
    expect(plain.changes).toBeNull();
    expect(plain.workspace).toBe(repo);
  });

  it("starts from the given base, a branch or a commit", async () => {
    const repo = await makeRepo();
    sh(repo, "checkout", "-q", "-b", "feature");
    await fs.writeFile(path.join(repo, "feature.txt"), "f\n");
    sh(repo, "add", "-A");
    sh(repo, "commit", "-q", "-m", "feature");
    sh(repo, "checkout", "-q", "main");
    const onFeature = await worktreeSession(bridge, repo, { base: "feature" });
    expect(onFeature.worktree!.base).toBe("feature");
    expect(await fs.readFile(path.join(onFeature.worktree!.path, "feature.txt"), "utf8")).toBe("f\n");
    const sha = sh(repo, "rev-parse", "main").trim();
    const onSha = await worktreeSession(bridge, repo, { base: "main~0" });
    expect(onSha.worktree!.base).toBe(sha);
  });

  it("answers every bad input with a clear 4xx and changes nothing on disk", async () => {
    const repo = await makeRepo();
    const taken = "worldline/taken";
    sh(repo, "branch", taken);
    const before = { branches: branches(repo), worktrees: worktreeList(repo), state: await checkoutState(repo) };
    const notRepo = await fs.mkdtemp(path.join(os.tmpdir(), "wl-plain-"));
    const empty = await fs.mkdtemp(path.join(os.tmpdir(), "wl-empty-"));
    sh(empty, "init", "-q");

    const cases: [Record<string, unknown>, number, string][] = [
      [{ workspace: notRepo }, 400, "worktree:not_a_repo"],
      [{ workspace: empty }, 400, "worktree:not_a_repo"],
      [{ workspace: repo, base: "no-such-branch" }, 400, "worktree:bad_ref"],
      [{ workspace: repo, base: "--output=/tmp/x" }, 400, "worktree:bad_ref"],
      [{ workspace: repo, branch: taken }, 409, "worktree:taken"],
      [{ workspace: repo, branch: "bad..name" }, 400, "worktree:bad_ref"],
      [{ workspace: repo, isolation: "none", base: "main" }, 400, "session:invalid"],
    ];
    for (const [body, status, code] of cases) {
      const answer = await post(bridge, "/api/v1/sessions", { isolation: "worktree", ...body });
      expect({ body, status: answer.status, code: answer.json.error?.code }).toEqual({ body, status, code });
      expect(answer.json.error.message.length).toBeGreaterThan(10);
    }
    expect(branches(repo)).toEqual(before.branches);
    expect(worktreeList(repo)).toBe(before.worktrees);
    expect(await checkoutState(repo)).toEqual(before.state);
    expect(await fs.readdir(notRepo)).toEqual([]);
    const made = await fs.readdir(path.join(bridge.home, "worktrees")).catch(() => [] as string[]);
    for (const name of made) expect(name.startsWith(path.basename(repo))).toBe(false);
  });

  it("runs the project's setup in a terminal before the first turn, and shows a failing one", async () => {
    const repo = await makeRepo({ "README.md": "x\n" });
    await fs.mkdir(path.join(repo, ".worldline"));
    await fs.writeFile(path.join(repo, ".worldline/setup"), "#!/bin/sh\necho set-up > made-by-setup.txt\n", {
      mode: 0o755,
    });
    sh(repo, "add", "-A");
    sh(repo, "commit", "-q", "-m", "setup");
    const created = await worktreeSession(bridge, repo);
    const marker = path.join(created.worktree!.path, "made-by-setup.txt");
    await waitFor(() => fs.readFile(marker, "utf8").catch(() => null), 20_000, "the setup's file");
    expect(await fs.readFile(marker, "utf8")).toBe("set-up\n");
    const events = async () => (await (await bridge.api(`/api/v1/sessions/${created.id}/events`)).json()) as any[];
    const opened = (await events()).find((event) => event.type === "terminal.opened");
    expect(opened.payload.title).toBe("Setup");
    await waitFor(
      async () => (await events()).some((e) => e.type === "session.updated" && e.payload.setup === "ok"),
      20_000,
      "setup ok",
    );

    const failing = await makeRepo({ ".worldline/worldline.json": JSON.stringify({ setup: "echo broken; exit 3" }) });
    const broken = await worktreeSession(bridge, failing);
    const notice = await waitFor(
      async () =>
        ((await (await bridge.api(`/api/v1/sessions/${broken.id}/events`)).json()) as any[]).find(
          (e) => e.type === "notice" && e.payload.level === "error",
        ),
      20_000,
      "the setup's failure notice",
    );
    expect(notice.payload.text).toContain("exited with code 3");
    const after = await session(bridge, broken.id);
    expect(after.archived).toBe(false);
    expect(after.state).toBe("idle");
  });

  it("says clearly when a worktree folder was deleted behind Worldline's back", async () => {
    const repo = await makeRepo();
    const created = await worktreeSession(bridge, repo);
    await fs.rm(created.worktree!.path, { recursive: true, force: true });
    for (const route of ["commit", "merge", "push"]) {
      const answer = await post(
        bridge,
        `/api/v1/sessions/${created.id}/${route}`,
        route === "merge" ? { strategy: "squash" } : {},
      );
      expect(answer.status).toBe(409);
      expect(answer.json.error.code).toBe("worktree:missing");
      expect(answer.json.error.message).toContain("deleted outside Worldline");
    }
    const archive = await post(bridge, `/api/v1/sessions/${created.id}/archive`, {});
    expect(archive.json.error.code).toBe("worktree:missing");
  });
});
