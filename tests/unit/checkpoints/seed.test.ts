import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openShadowRepo } from "../../../server/checkpoints/index.ts";
import { fingerprint, makeSandbox, sha256, userGit, write } from "./helpers.ts";

let box: ReturnType<typeof makeSandbox>;
beforeEach(() => {
  box = makeSandbox();
});
afterEach(() => box.cleanup());

/** The files of `commit` in the shadow repository, path → content. */
function snapshotFiles(gitDir: string, commit: string): Map<string, string> {
  const shadow = (...args: string[]) =>
    execFileSync("git", [`--git-dir=${gitDir}`, ...args], { encoding: "utf8", maxBuffer: 64 << 20 });
  const paths = shadow("ls-tree", "-r", "-z", "--name-only", commit).split("\0").filter(Boolean);
  return new Map(paths.map((path) => [path, shadow("cat-file", "blob", `${commit}:${path}`)]));
}

/** Loose objects the shadow repository wrote itself (borrowed ones live in the user's store). */
function looseObjects(gitDir: string): number {
  const objects = join(gitDir, "objects");
  return readdirSync(objects)
    .filter((name) => /^[0-9a-f]{2}$/.test(name))
    .reduce((sum, dir) => sum + readdirSync(join(objects, dir)).length, 0);
}

function committedRepo(files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) write(box.ws, path, content);
  userGit(box.ws, "init", "-q", "-b", "main");
  userGit(box.ws, "add", "-A");
  userGit(box.ws, "commit", "-qm", "user commit");
}

describe("the first snapshot of a git repository", () => {
  it("borrows the repository's objects and index, hashing only what changed since git looked", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 50; i++) files[`src/file${i}.ts`] = `export const n = ${i};\n`;
    files["src/symlink-linker.ts"] = "// a name with the split index's extension signature in it\n";
    committedRepo(files);
    write(box.ws, "src/file3.ts", "export const n = 'edited, not staged';\n");
    write(box.ws, "notes/new.md", "untracked\n");
    const userIndex = sha256(readFileSync(join(box.ws, ".git/index")));

    const repo = await openShadowRepo(box.ws, { home: box.home });
    const first = await repo.snapshot();

    expect(readFileSync(join(repo.gitDir, "objects/info/alternates"), "utf8").trim()).toBe(
      join(box.ws, ".git/objects"),
    );
    // The edited and the new file, the tree objects and the commit: not the 49 files git already had.
    expect(looseObjects(repo.gitDir)).toBeLessThan(10);
    const captured = snapshotFiles(repo.gitDir, first.commit);
    expect([...captured.keys()].sort()).toEqual([...Object.keys(files), "notes/new.md"].sort());
    expect(captured.get("src/file3.ts")).toBe("export const n = 'edited, not staged';\n");
    expect(captured.get("src/file7.ts")).toBe("export const n = 7;\n");
    expect(sha256(readFileSync(join(box.ws, ".git/index")))).toBe(userIndex);
  });

  it("restores files whose content only the borrowed store held", async () => {
    committedRepo({ "a.txt": "a1\n", "b/c.txt": "c1\n" });
    const repo = await openShadowRepo(box.ws, { home: box.home });
    const original = fingerprint(box.ws);
    const first = await repo.snapshot();
    write(box.ws, "a.txt", "a2\n");
    write(box.ws, "b/c.txt", "c2 changed\n");
    await repo.snapshot();
    await repo.restore(first.commit);
    expect(fingerprint(box.ws)).toEqual(original);
  });

  it("looks afresh at entries git would trust without a stat (assume-unchanged, skip-worktree)", async () => {
    committedRepo({ "trusted.txt": "v1\n", "sparse.txt": "s1\n", "plain.txt": "p\n" });
    userGit(box.ws, "update-index", "--assume-unchanged", "trusted.txt");
    userGit(box.ws, "update-index", "--skip-worktree", "sparse.txt");
    write(box.ws, "trusted.txt", "v2, git was told not to look\n");
    write(box.ws, "sparse.txt", "s2\n");
    const repo = await openShadowRepo(box.ws, { home: box.home });
    const captured = snapshotFiles(repo.gitDir, (await repo.snapshot()).commit);
    expect(captured.get("trusted.txt")).toBe("v2, git was told not to look\n");
    expect(captured.get("sparse.txt")).toBe("s2\n");
  });

  it("drops tracked paths the workspace skip list excludes, as for any folder", async () => {
    committedRepo({ "src/app.ts": "app\n", "node_modules/dep/index.js": "dep\n" });
    const repo = await openShadowRepo(box.ws, { home: box.home });
    const captured = snapshotFiles(repo.gitDir, (await repo.snapshot()).commit);
    expect([...captured.keys()]).toEqual(["src/app.ts"]);
  });

  it("snapshots a nested repository recorded as a gitlink as plain files", async () => {
    write(box.ws, "vendor/lib/lib.ts", "lib\n");
    userGit(join(box.ws, "vendor/lib"), "init", "-q");
    userGit(join(box.ws, "vendor/lib"), "add", "-A");
    userGit(join(box.ws, "vendor/lib"), "commit", "-qm", "lib");
    committedRepo({ "main.ts": "main\n" }); // `git add -A` records vendor/lib as a gitlink
    const repo = await openShadowRepo(box.ws, { home: box.home });
    const captured = snapshotFiles(repo.gitDir, (await repo.snapshot()).commit);
    expect(captured.get("vendor/lib/lib.ts")).toBe("lib\n");
    expect(captured.get("main.ts")).toBe("main\n");
  });

  it("borrows the shared object store of a linked worktree", async () => {
    committedRepo({ "a.txt": "a\n" });
    const linked = join(box.root, "linked");
    userGit(box.ws, "worktree", "add", "-q", "-b", "side", linked);
    write(linked, "b.txt", "only in the worktree\n");
    const repo = await openShadowRepo(linked, { home: box.home });
    const captured = snapshotFiles(repo.gitDir, (await repo.snapshot()).commit);
    expect(readFileSync(join(repo.gitDir, "objects/info/alternates"), "utf8").trim()).toBe(
      join(box.ws, ".git/objects"),
    );
    expect(captured).toEqual(
      new Map([
        ["a.txt", "a\n"],
        ["b.txt", "only in the worktree\n"],
      ]),
    );
  });

  it("hashes everything itself when the index is one git cannot read elsewhere (a split index)", async () => {
    committedRepo({ "a.txt": "a\n", "b.txt": "b\n" });
    userGit(box.ws, "update-index", "--split-index");
    const repo = await openShadowRepo(box.ws, { home: box.home });
    const captured = snapshotFiles(repo.gitDir, (await repo.snapshot()).commit);
    expect(existsSync(join(repo.gitDir, "objects/info/alternates"))).toBe(false);
    expect(captured.get("a.txt")).toBe("a\n");
    expect(captured.get("b.txt")).toBe("b\n");
  });
});
