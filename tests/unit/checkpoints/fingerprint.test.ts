import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { racyWindowMs } from "../../../server/checkpoints/fingerprint.ts";
import { openShadowRepo, type ShadowRepo } from "../../../server/checkpoints/index.ts";
import { hold } from "../../support/wait.ts";
import { makeSandbox, read, write } from "./helpers.ts";

/**
 * The in-process "nothing changed" check (server/checkpoints/fingerprint.ts). Whether git ran
 * is observed by taking it away: with the helper off and PATH pointing nowhere, a snapshot that
 * asks git fails, one answered from the fingerprint does not.
 */

/** Entries touched within the racy window are not trusted (fingerprint.ts RACY_MS): the tree must age first. */
const age = async () => hold((await racyWindowMs(box.ws)) + 50, "past the racy window: only then is a stat trusted");

let box: ReturnType<typeof makeSandbox>;
let repo: ShadowRepo;
const savedEnv = { PATH: process.env.PATH, helper: process.env.WORLDLINE_GIT_HELPER };

beforeEach(async () => {
  box = makeSandbox();
  process.env.WORLDLINE_GIT_HELPER = "0";
  write(box.ws, ".gitignore", "logs/\n*.log\n");
  write(box.ws, "src/app.ts", "export const a = 1;\n");
  write(box.ws, "logs/a.txt", "ignored folder\n");
  write(box.ws, "debug.log", "ignored file\n");
  write(box.ws, "node_modules/pkg/index.js", "skip list\n");
  mkdirSync(join(box.ws, "empty"));
  repo = await openShadowRepo(box.ws, { home: box.home });
});

afterEach(() => {
  process.env.PATH = savedEnv.PATH;
  if (savedEnv.helper === undefined) delete process.env.WORLDLINE_GIT_HELPER;
  else process.env.WORLDLINE_GIT_HELPER = savedEnv.helper;
  box.cleanup();
});

/** Snapshots with git out of reach: only the fingerprint can answer. */
async function snapshotWithoutGit() {
  process.env.PATH = "/nonexistent";
  try {
    return await repo.snapshot();
  } finally {
    process.env.PATH = savedEnv.PATH;
  }
}

describe("snapshot fingerprint", () => {
  it("answers an unchanged work tree without git, and asks git once anything changed", async () => {
    await age();
    const first = await repo.snapshot();
    const again = await snapshotWithoutGit();
    expect(again).toEqual({ commit: first.commit, changed: [], skipped: [] });

    write(box.ws, "src/app.ts", "export const a = 2;\n"); // same size, same second
    await expect(snapshotWithoutGit()).rejects.toThrow(/could not run git/);
    const next = await repo.snapshot();
    expect(next.changed.map((change) => change.path)).toEqual(["src/app.ts"]);
  });

  it.each([
    ["a file rewritten with the same size", () => write(box.ws, "src/app.ts", "export const a = 3;\n"), "src/app.ts"],
    ["a new file in an empty folder", () => write(box.ws, "empty/new.ts", "x\n"), "empty/new.ts"],
    ["a new file at the top", () => write(box.ws, "top.ts", "x\n"), "top.ts"],
    ["a .gitignore edit that un-ignores a file", () => write(box.ws, ".gitignore", "logs/\n"), "debug.log"],
  ])("notices %s through the fingerprint", async (_what, change, path) => {
    await age();
    const first = await repo.snapshot();
    change();
    const next = await repo.snapshot();
    expect(next.commit).not.toBe(first.commit);
    expect(next.changed.map((entry) => entry.path)).toContain(path);
  });

  it("changes twice within one timestamp tick are both captured (racy entries are never trusted)", async () => {
    await age();
    await repo.snapshot();
    write(box.ws, "src/app.ts", "export const a = 4;\n");
    const second = await repo.snapshot();
    write(box.ws, "src/app.ts", "export const a = 5;\n"); // at once, same size: the stats may not differ
    const third = await repo.snapshot();
    expect(third.commit).not.toBe(second.commit);
    expect((await repo.fileAt(third.commit, "src/app.ts"))?.toString()).toBe(read(box.ws, "src/app.ts"));
  });

  it("keeps asking git while a snapshot leaves paths out for its size budget", async () => {
    for (let i = 0; i < 6; i++) write(box.ws, `big${i}.txt`, "x".repeat(100));
    const small = await openShadowRepo(box.ws, { home: box.home, maxSnapshotBytes: 350 });
    await age();
    expect((await small.snapshot()).skipped.length).toBeGreaterThan(0);
    let last = await small.snapshot();
    while (last.skipped.length > 0) last = await small.snapshot();
    expect((await small.fileAt(last.commit, "big5.txt"))?.toString()).toBe("x".repeat(100));
  });

  it("ignored and skipped paths change without costing a git call", async () => {
    await age();
    const first = await repo.snapshot();
    writeFileSync(join(box.ws, "debug.log"), "still ignored, now longer\n");
    writeFileSync(join(box.ws, "logs/a.txt"), "ignored folder, rewritten\n");
    write(box.ws, "node_modules/pkg/new.js", "skip list\n");
    expect((await snapshotWithoutGit()).commit).toBe(first.commit);
  });
});
