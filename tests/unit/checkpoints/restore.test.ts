import { execSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openShadowRepo, type ShadowRepo } from "../../../server/checkpoints/index.ts";
import { isWorldlineError } from "../../../server/errors.ts";
import { fingerprint, makeSandbox, read, sha256, userGit, write } from "./helpers.ts";

let box: ReturnType<typeof makeSandbox>;
let repo: ShadowRepo;
beforeEach(async () => {
  box = makeSandbox();
  repo = await openShadowRepo(box.ws, { home: box.home });
});
afterEach(() => box.cleanup());

/** What the snapshot engine owns: everything but ignored paths. */
const state = () => fingerprint(box.ws, ["node_modules", "cache.tmp"]);

/** A workspace with a bit of everything. */
function seed(): void {
  write(box.ws, "src/main.ts", "console.log('v1');\n");
  write(box.ws, "src/util/strings.ts", "export const s = 'v1';\n");
  write(box.ws, "docs/readme.md", "# Readme\n");
  write(box.ws, "bin/run.sh", "#!/bin/sh\necho run\n", 0o755);
  write(box.ws, "assets/logo.png", Buffer.from(Array.from({ length: 2048 }, (_, i) => (i * 7) % 256)));
  write(box.ws, "node_modules/dep/index.js", "module.exports = 1;\n");
  write(box.ws, ".gitignore", "*.tmp\n");
  write(box.ws, "cache.tmp", "ignored\n");
  symlinkSync("src/main.ts", join(box.ws, "main-link"));
  symlinkSync(join(box.root, "outside"), join(box.ws, "outside-link"));
  write(box.root, "outside/keep.txt", "outside\n");
}

/** The agent's work between two checkpoints: edits, deletes, renames, mode and type changes, shell output. */
function mutate(): void {
  write(box.ws, "src/main.ts", "console.log('v2');\n");
  rmSync(join(box.ws, "docs"), { recursive: true });
  renameSync(join(box.ws, "src/util/strings.ts"), join(box.ws, "src/util/text.ts"));
  chmodSync(join(box.ws, "bin/run.sh"), 0o644);
  write(box.ws, "assets/logo.png", Buffer.from([137, 80, 78, 71, 0, 0]));
  unlinkSync(join(box.ws, "main-link"));
  write(box.ws, "main-link", "now a file\n");
  unlinkSync(join(box.ws, "outside-link"));
  symlinkSync("/tmp", join(box.ws, "outside-link"));
  execSync("mkdir -p out/gen && seq 1 50 > out/gen/numbers.txt && touch out/empty && rm cache.tmp", { cwd: box.ws });
  write(box.ws, "node_modules/dep/index.js", "module.exports = 2;\n");
}

describe("restore", () => {
  it("makes the workspace exactly equal to the snapshot, and back again", async () => {
    seed();
    const original = state();
    const first = await repo.snapshot();
    mutate();
    const mutated = state();
    const second = await repo.snapshot();

    const back = await repo.restore(first.commit, { baseline: second.commit });
    expect(state()).toEqual(original);
    expect(back.deleted).toEqual(["out/empty", "out/gen/numbers.txt", "src/util/text.ts"]);
    expect(back.written).toEqual([
      "assets/logo.png",
      "bin/run.sh",
      "docs/readme.md",
      "main-link",
      "outside-link",
      "src/main.ts",
      "src/util/strings.ts",
    ]);
    expect(existsSync(join(box.ws, "out"))).toBe(false); // folders the restore emptied go too
    expect(read(box.ws, "node_modules/dep/index.js")).toBe("module.exports = 2;\n"); // ignored: untouched
    expect(existsSync(join(box.ws, "cache.tmp"))).toBe(false); // ignored files are not resurrected either
    expect(read(box.root, "outside/keep.txt")).toBe("outside\n");

    await repo.restore(second.commit);
    expect(state()).toEqual(mutated);
  });

  it("can be undone: `before` holds the state it replaced", async () => {
    seed();
    const first = await repo.snapshot();
    mutate();
    const mutated = state();
    const restored = await repo.restore(first.commit);
    await repo.restore(restored.before);
    expect(state()).toEqual(mutated);
  });

  it("takes the caller's snapshot of the work tree as `before`, without another", async () => {
    seed();
    const first = await repo.snapshot();
    mutate();
    const mutated = state();
    const current = await repo.snapshot({ changes: false });
    write(box.ws, "made-after.txt", "created after the caller looked\n");
    const restored = await repo.restore(first.commit, { current: current.commit });
    expect(restored.before).toBe(current.commit);
    // What the caller saw is restored; a file created since it looked is left alone, not deleted.
    expect(read(box.ws, "src/main.ts")).toBe("console.log('v1');\n");
    expect(read(box.ws, "made-after.txt")).toBe("created after the caller looked\n");
    rmSync(join(box.ws, "made-after.txt"));
    await repo.restore(restored.before);
    expect(state()).toEqual(mutated);
  });

  it("keeps what the caller's snapshot could not capture untouched", async () => {
    const small = await openShadowRepo(box.ws, { home: box.home, maxFileBytes: 100 });
    write(box.ws, "data.bin", "small");
    const first = await small.snapshot();
    write(box.ws, "data.bin", Buffer.alloc(1000, 7));
    const current = await small.snapshot({ changes: false });
    const result = await small.restore(first.commit, { current: current.commit });
    expect(result.untouched).toEqual(["data.bin"]);
    expect(readFileSync(join(box.ws, "data.bin"))).toEqual(Buffer.alloc(1000, 7));
    await expect(small.restore(first.commit, { current: "f".repeat(40) })).rejects.toMatchObject({
      code: "checkpoint:not_found",
    });
  });

  it("refuses, writing nothing, when a file it would change was edited outside the agent", async () => {
    seed();
    const first = await repo.snapshot();
    write(box.ws, "src/main.ts", "agent edit\n");
    write(box.ws, "docs/readme.md", "agent edit\n");
    const baseline = await repo.snapshot();
    write(box.ws, "src/main.ts", "the user's unsaved work\n"); // made in an editor after the agent's checkpoint
    write(box.ws, "user-new.txt", "the user's new file\n");
    const before = state();

    const error = await repo.restore(first.commit, { baseline: baseline.commit }).catch((e: unknown) => e);
    expect(isWorldlineError(error) && error.code).toBe("checkpoint:conflict");
    expect(isWorldlineError(error) && error.details).toEqual({ paths: ["src/main.ts", "user-new.txt"] });
    expect(state()).toEqual(before);

    const forced = await repo.restore(first.commit, { baseline: baseline.commit, force: true });
    expect(read(box.ws, "src/main.ts")).toBe("console.log('v1');\n");
    expect(existsSync(join(box.ws, "user-new.txt"))).toBe(false);
    // Even a forced restore loses nothing for good: undoing it brings the user's edits back.
    await repo.restore(forced.before);
    expect(state()).toEqual(before);
  });

  it("does not count an outside edit the restore would not touch as a conflict", async () => {
    seed();
    const first = await repo.snapshot();
    write(box.ws, "src/main.ts", "agent edit\n");
    const baseline = await repo.snapshot();
    write(box.ws, "docs/readme.md", "user edit\n");
    write(box.ws, "docs/readme.md", "# Readme\n"); // changed and changed back: equal to the target, nothing to overwrite
    write(box.ws, "cache.tmp", "user edit to an ignored file\n");
    const result = await repo.restore(first.commit, { baseline: baseline.commit });
    expect(result.written).toEqual(["src/main.ts"]);
  });

  it("refuses to write through a symlink that now stands where the snapshot has a folder", async () => {
    write(box.ws, "lib/a.txt", "a\n");
    write(box.ws, "lib/b.txt", "b\n");
    const first = await repo.snapshot();
    rmSync(join(box.ws, "lib"), { recursive: true });
    write(box.ws, ".gitignore", "lib\n");
    mkdirSync(join(box.root, "elsewhere"));
    symlinkSync(join(box.root, "elsewhere"), join(box.ws, "lib"));
    const before = state();

    const error = await repo.restore(first.commit).catch((e: unknown) => e);
    expect(isWorldlineError(error) && error.code).toBe("checkpoint:blocked");
    expect(isWorldlineError(error) && error.details).toEqual({ paths: ["lib"] });
    expect(state()).toEqual(before);
    expect(existsSync(join(box.root, "elsewhere/a.txt"))).toBe(false);
  });

  it("replaces a symlink the agent put where a folder was", async () => {
    write(box.ws, "lib/a.txt", "a\n");
    const first = await repo.snapshot();
    rmSync(join(box.ws, "lib"), { recursive: true });
    mkdirSync(join(box.root, "elsewhere"));
    symlinkSync(join(box.root, "elsewhere"), join(box.ws, "lib"));
    await repo.snapshot();
    await repo.restore(first.commit);
    expect(read(box.ws, "lib/a.txt")).toBe("a\n");
    expect(existsSync(join(box.root, "elsewhere/a.txt"))).toBe(false);
  });

  it("leaves a file it could not capture alone", async () => {
    const small = await openShadowRepo(box.ws, { home: box.home, maxFileBytes: 100 });
    write(box.ws, "data.bin", "small");
    const first = await small.snapshot();
    write(box.ws, "data.bin", Buffer.alloc(1000, 7)); // grows past the limit: its new content is not captured
    write(box.ws, "late.bin", Buffer.alloc(1000, 9));
    const result = await small.restore(first.commit);
    expect(result.untouched).toEqual(["data.bin", "late.bin"]);
    expect(readFileSync(join(box.ws, "data.bin"))).toEqual(Buffer.alloc(1000, 7));
    expect(readFileSync(join(box.ws, "late.bin"))).toEqual(Buffer.alloc(1000, 9));
  });

  it("leaves the user's own git repository alone", async () => {
    seed();
    userGit(box.ws, "init", "-q");
    userGit(box.ws, "add", "src");
    userGit(box.ws, "commit", "-qm", "user commit");
    const first = await repo.snapshot();
    mutate();
    const index = sha256(readFileSync(join(box.ws, ".git/index")));
    const head = userGit(box.ws, "rev-parse", "HEAD");
    await repo.restore(first.commit);
    expect(sha256(readFileSync(join(box.ws, ".git/index")))).toBe(index);
    expect(userGit(box.ws, "rev-parse", "HEAD")).toBe(head);
    expect(userGit(box.ws, "log", "--format=%s")).toBe("user commit\n");
  });

  it("handles names with spaces, quotes, unicode and newlines", async () => {
    const names = ["with space.txt", 'quote"d.txt', "ünïcødé/файл.md", "new\nline.txt", "-dash.txt"];
    for (const name of names) write(box.ws, name, `content of ${name}\n`);
    const original = state();
    const first = await repo.snapshot();
    expect(first.changed.map((change) => change.path).sort()).toEqual([...names].sort());
    for (const name of names) write(box.ws, name, "changed\n");
    write(box.ws, "ünïcødé/neu.md", "new\n");
    await repo.snapshot();
    await repo.restore(first.commit);
    expect(state()).toEqual(original);
  });

  it("rejects unknown snapshot ids", async () => {
    write(box.ws, "a.txt", "a");
    await repo.snapshot();
    await expect(repo.restore("0123456789abcdef0123456789abcdef01234567")).rejects.toMatchObject({
      code: "checkpoint:not_found",
    });
    await expect(repo.restore("--help")).rejects.toMatchObject({ code: "checkpoint:not_found" });
    await expect(repo.diff("HEAD")).rejects.toMatchObject({ code: "checkpoint:not_found" });
  });
});

describe("diff and changedSince", () => {
  it("compares two snapshots, or a snapshot with the working tree", async () => {
    write(box.ws, "a.txt", "one\n");
    write(box.ws, "b.txt", "b\n");
    const first = await repo.snapshot();
    write(box.ws, "a.txt", "two\n");
    const second = await repo.snapshot();
    rmSync(join(box.ws, "b.txt"));

    const between = await repo.diff(first.commit, second.commit);
    expect(between.files).toEqual([{ path: "a.txt", status: "modified", additions: 1, deletions: 1 }]);
    expect(between.patch).toContain("-one\n+two\n");
    expect(between.truncated).toBe(false);

    const toNow = await repo.diff(first.commit);
    expect(toNow.files.map((file) => `${file.status} ${file.path}`)).toEqual(["modified a.txt", "deleted b.txt"]);
    expect(await repo.changedSince(second.commit)).toEqual(["b.txt"]);
    expect(await repo.changedSince(first.commit)).toEqual(["a.txt", "b.txt"]);
    // Looking is not snapshotting: the latest snapshot is still the second one.
    expect(await repo.latest()).toBe(second.commit);
  });
});

describe("materialize", () => {
  it("writes a snapshot into another folder exactly, for a fork", async () => {
    seed();
    const snapshotState = state();
    const first = await repo.snapshot();
    mutate();
    const dest = join(box.root, "fork");
    const result = await repo.materialize(first.commit, dest);
    expect(fingerprint(dest)).toEqual(snapshotState);
    expect(result.deleted).toEqual([]);
    await expect(repo.materialize(first.commit, box.ws)).rejects.toMatchObject({ code: "checkpoint:bad_request" });
  });

  it("brings an existing folder to the snapshot, keeping its ignored files", async () => {
    write(box.ws, "a.txt", "a\n");
    const first = await repo.snapshot();
    const dest = join(box.root, "worktree");
    write(dest, "a.txt", "stale\n");
    write(dest, "extra.txt", "not in the snapshot\n");
    write(dest, "node_modules/x.js", "kept\n");
    const result = await repo.materialize(first.commit, dest);
    expect(result).toEqual({ written: ["a.txt"], deleted: ["extra.txt"] });
    expect(fingerprint(dest)).toEqual(
      new Map([
        ["a.txt", `file:${sha256("a\n")}:-`],
        ["node_modules/x.js", `file:${sha256("kept\n")}:-`],
      ]),
    );
  });
});
