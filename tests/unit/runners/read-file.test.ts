import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunnerOp, RunnerRequest } from "../../../server/protocol";
import { RootGuard } from "../../../server/runner/guard";
import { RunnerWorker } from "../../../server/runner/serve";
import { RunnerLink } from "../../../server/runners/link";
import { RemoteHost } from "../../../server/runners/remote-host";
import { readFileTool } from "../../../server/tools/read-file";
import type { ToolContext } from "../../../server/tools/types";

/** read_file on a runner's workspace: the hub's link and host joined to a runner's worker in process. */
describe("read_file through a runner", () => {
  let root: string;
  let outside: string;
  let worker: RunnerWorker;
  let host: RemoteHost;
  const ops: RunnerOp[] = [];

  beforeAll(async () => {
    root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-read-root-")));
    outside = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-read-out-")));
    await fs.writeFile(path.join(root, "a.txt"), "one\ntwo\nthree\n");
    await fs.writeFile(path.join(outside, "secret.txt"), "outside\n");
    await fs.symlink(outside, path.join(root, "escape"));
    const link = new RunnerLink("north", { graceMs: 10_000, log: () => undefined });
    worker = new RunnerWorker(
      await RootGuard.create([root]),
      {
        response: (response) => link.receive("runner.response", response),
        output: () => undefined,
        exit: () => undefined,
        ptyData: () => undefined,
        ptyExit: () => undefined,
        filesChanged: () => undefined,
        streamData: () => undefined,
        streamEnd: () => undefined,
        log: () => undefined,
      },
      await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-read-home-"))),
    );
    link.attachVia("bridge-a", "process-1", (request: RunnerRequest) => {
      ops.push(request.operation.op);
      void worker.handle(request);
    });
    host = new RemoteHost("north", { link: () => link, log: () => undefined, requireKnown: async () => undefined });
  });

  afterAll(async () => {
    await worker.stopAll();
  });

  function context(toolCallId: string): ToolContext {
    return {
      cwd: root,
      host,
      signal: new AbortController().signal,
      sessionId: "s1",
      toolCallId,
      emit: () => undefined,
    };
  }

  it("resolves for the approval check, checks again, and reads in one request", async () => {
    ops.length = 0;
    const args = { path: "a.txt", offset: 2 };
    const ctx = context("c1");
    expect(await readFileTool.needsApproval(args, ctx)).toMatchObject({ level: "none", subject: "a.txt" });
    const result = await readFileTool.run(args, ctx);
    expect(result).toMatchObject({ isError: false, output: "     2\ttwo\n     3\tthree" });
    expect(ops).toEqual(["resolve", "resolve", "resolvePage"]);
  });

  it("says so when the file is missing, naming it as the model did", async () => {
    const result = await readFileTool.run({ path: "nope.txt" }, context("c2"));
    expect(result).toMatchObject({ isError: true });
    expect(result.output).toMatch(/^File not found: nope\.txt\./);
  });

  it("refuses a read through a symlink out of the runner's roots", async () => {
    const result = await readFileTool.run({ path: "escape/secret.txt" }, context("c3"));
    expect(result.isError).toBe(true);
    expect(result.output).toContain("outside the folders this runner serves; the runner refused it");
    expect(result.output).not.toContain("outside\n");
  });
});
