import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../../support/wait";
import type { RunnerResponse } from "../../../server/protocol";
import { RootGuard } from "../../../server/runner/guard";
import { RunnerWorker } from "../../../server/runner/serve";

/** A runner's request handling without a hub: requests in, responses and log lines out. */
describe("a runner's own checks", () => {
  let root: string;
  let outside: string;
  let worker: RunnerWorker;
  const responses: RunnerResponse[] = [];
  const logs: string[] = [];
  let terminalOutput = "";
  let next = 0;

  async function ask(operation: unknown, extra: Record<string, unknown> = {}) {
    const id = `r${++next}`;
    await worker.handle({ id, epoch: 5, operation, ...extra });
    return responses.find((response) => response.id === id)!;
  }

  beforeAll(async () => {
    root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-guard-root-")));
    outside = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-guard-out-")));
    await fs.writeFile(path.join(root, "a.txt"), "inside\n");
    await fs.writeFile(path.join(outside, "b.txt"), "outside\n");
    await fs.symlink(outside, path.join(root, "link"));
    worker = new RunnerWorker(
      await RootGuard.create([root]),
      {
        response: (response) => responses.push(response),
        output: () => undefined,
        exit: () => undefined,
        ptyData: (_ptyId, data) => (terminalOutput += data.toString("utf8")),
        ptyExit: () => undefined,
        filesChanged: () => undefined,
        streamData: () => undefined,
        streamEnd: () => undefined,
        log: (line) => logs.push(line),
      },
      // Its own data directory: shadow repositories of its workspaces go there.
      await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-guard-home-"))),
    );
  });

  afterAll(async () => {
    await worker.stopAll();
  });

  it("runs a terminal's input sent right behind its open (the open still checking the folder)", async () => {
    const ptyId = "pty-right-behind";
    const open = ask({ op: "pty.open", ptyId, cwd: root, cols: 80, rows: 24, env: {} });
    const typed = ask({ op: "pty.input", ptyId, data: "echo typed-$((40+2))\r" });
    expect((await open).ok).toBe(true);
    expect(await typed).toMatchObject({ ok: true });
    await waitFor(() => terminalOutput.includes("typed-42"), 10_000, "the typed command's output");
    expect((await ask({ op: "pty.kill", ptyId })).ok).toBe(true);
  });

  it("serves paths under its roots", async () => {
    const answer = await ask({ op: "readText", path: path.join(root, "a.txt") });
    expect(answer).toEqual({ id: answer.id, ok: true, result: "inside\n" });
  });

  it("resolves a path the model gave and reads a page of it in one request", async () => {
    const answer = await ask({
      op: "resolvePage",
      workspace: root,
      input: "a.txt",
      offset: 1,
      limit: 10,
      maxLineChars: 100,
    });
    expect(answer).toMatchObject({
      ok: true,
      result: {
        resolved: { input: "a.txt", real: path.join(root, "a.txt"), display: "a.txt", inside: true },
        page: { kind: "page", lines: ["inside"], totalLines: 1 },
      },
    });
  });

  it("refuses paths outside its roots, also through a symlink and a relative climb, and logs them", async () => {
    for (const operation of [
      { op: "readText", path: path.join(outside, "b.txt") },
      { op: "readText", path: path.join(root, "link/b.txt") },
      { op: "readText", path: `${root}/../${path.basename(outside)}/b.txt` },
      { op: "resolve", workspace: root, input: "link/b.txt" },
      { op: "resolvePage", workspace: root, input: "link/b.txt", offset: 1, limit: 10, maxLineChars: 100 },
      {
        op: "resolvePage",
        workspace: path.join(root, "link"),
        input: "b.txt",
        offset: 1,
        limit: 10,
        maxLineChars: 100,
      },
      {
        op: "writeResolved",
        resolved: { input: "x", real: path.join(outside, "new.txt"), display: "x", inside: true },
        content: "x",
      },
      { op: "exec", processId: "p1", command: "true", cwd: outside, env: {} },
      { op: "checkWorkspace", path: outside },
    ]) {
      const answer = await ask(operation);
      expect(answer.ok, JSON.stringify(operation)).toBe(false);
      expect(!answer.ok && answer.error.code).toBe("runner:outside_roots");
    }
    await expect(fs.stat(path.join(outside, "new.txt"))).rejects.toThrow();
    expect(
      logs.filter((line) => line.includes("outside the folders this runner serves")).length,
    ).toBeGreaterThanOrEqual(9);
  });

  it("refuses to write through a hard link whatever the hub says was approved, and writes plain files", async () => {
    const original = path.join(outside, "linked.txt");
    await fs.writeFile(original, "outside original\n");
    const linked = path.join(root, "linked.txt");
    await fs.link(original, linked);
    const resolved = await ask({ op: "resolve", workspace: root, input: "linked.txt" });
    expect(resolved).toMatchObject({ ok: true, result: { real: linked, hardLinks: 2 } });
    // The hub claims the hard links were approved.
    const write = await ask({
      op: "writeResolved",
      resolved: { input: "linked.txt", real: linked, display: "linked.txt", inside: true, hardLinks: 2 },
      content: "pwned\n",
    });
    expect(!write.ok && write.error.code).toBe("runner:outside_roots");
    expect(!write.ok && write.error.message).toMatch(/has 2 hard links/);
    expect(await fs.readFile(original, "utf8")).toBe("outside original\n");
    const plain = path.join(root, "plain.txt");
    const written = await ask({
      op: "writeResolved",
      resolved: { input: "plain.txt", real: plain, display: "plain.txt", inside: true },
      content: "fine\n",
    });
    expect(written.ok).toBe(true);
    expect(await fs.readFile(plain, "utf8")).toBe("fine\n");
  });

  it("refuses snapshots, skills and stdio programs outside its roots, and paths that climb out of a workspace", async () => {
    for (const operation of [
      { op: "snapshots.snapshot", workspace: outside, message: "x" },
      { op: "skills.list", workspace: path.join(root, "link") },
      { op: "stdio.open", processId: "s1", command: "cat", args: [], cwd: outside, env: {}, inherit: "basic" },
    ]) {
      const answer = await ask(operation);
      expect(answer.ok, JSON.stringify(operation)).toBe(false);
      expect(!answer.ok && answer.error.code).toBe("runner:outside_roots");
    }
    const climb = await ask({ op: "snapshots.readNow", workspace: root, path: `../${path.basename(outside)}/b.txt` });
    expect(!climb.ok && climb.error.code).toBe("checkpoint:bad_request");
  });

  it("refuses a request with an epoch older than one it saw for the session", async () => {
    const file = path.join(root, "a.txt");
    expect((await ask({ op: "stat", path: file }, { sessionId: "s1", epoch: 10 })).ok).toBe(true);
    const stale = await ask({ op: "stat", path: file }, { sessionId: "s1", epoch: 9 });
    expect(!stale.ok && stale.error.code).toBe("runner:stale_epoch");
    expect((await ask({ op: "stat", path: file }, { sessionId: "s1", epoch: 11 })).ok).toBe(true);
    // Other sessions have their own epochs.
    expect((await ask({ op: "stat", path: file }, { sessionId: "s2", epoch: 1 })).ok).toBe(true);
  });

  it("does a once-only request sent again after a dropped connection once, and answers it again", async () => {
    const request = {
      id: "again-1",
      epoch: 5,
      operation: { op: "exec", processId: "p-again", command: "true", cwd: root, env: {} },
    };
    await worker.handle(request);
    await worker.handle(request);
    const answers = responses.filter((response) => response.id === "again-1");
    // A second run would answer with another pid (or "already runs"): the same answer means one run.
    expect(answers).toHaveLength(2);
    expect(answers[0].ok).toBe(true);
    expect(answers[1]).toEqual(answers[0]);
  });

  it("answers a request it cannot parse with an error, and ignores one without an id", async () => {
    await worker.handle({ id: "bad1", epoch: 1, operation: { op: "format-disk" } });
    expect(responses.find((response) => response.id === "bad1")).toMatchObject({
      ok: false,
      error: { code: "runner:bad_request" },
    });
    const before = responses.length;
    await worker.handle("not even an object");
    await worker.handle({ operation: { op: "stat", path: "/" } });
    expect(responses.length).toBe(before);
    expect(logs.some((line) => line.startsWith("refused a malformed request"))).toBe(true);
  });
});
