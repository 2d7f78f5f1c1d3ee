import { execSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openShadowRepo, shadowGitDir } from "../../../server/checkpoints/index.ts";
import { makeSandbox, sha256, snapshotEntries, userGit, write } from "./helpers.ts";

/** The uid of `nobody`, for a test that needs an unprivileged user while the suite runs as root. */
const NOBODY = 65534;

let box: ReturnType<typeof makeSandbox>;
beforeEach(() => {
  box = makeSandbox();
});
afterEach(() => box.cleanup());

describe("snapshot", () => {
  it("keeps the shadow repository under <home>/snapshots and never touches the user's .git", async () => {
    write(box.ws, "src/app.ts", "export const a = 1;\n");
    write(box.ws, "README.md", "# hi\n");
    userGit(box.ws, "init", "-q");
    userGit(box.ws, "add", ".");
    userGit(box.ws, "commit", "-qm", "initial");
    // A hook that would leave a trace if anything ran it.
    write(box.ws, ".git/hooks/post-index-change", '#!/bin/sh\ntouch "$GIT_DIR/../HOOK-RAN"\n', 0o755);
    write(box.ws, ".git/hooks/pre-commit", '#!/bin/sh\ntouch "$GIT_DIR/../HOOK-RAN"\n', 0o755);
    write(box.ws, "src/app.ts", "export const a = 2;\n"); // uncommitted edit
    write(box.ws, "staged.txt", "staged\n");
    userGit(box.ws, "add", "staged.txt"); // staged, uncommitted
    write(box.ws, "untracked.txt", "new\n");

    const indexBefore = sha256(readFileSync(join(box.ws, ".git/index")));
    const headBefore = userGit(box.ws, "rev-parse", "HEAD");
    const statusBefore = userGit(box.ws, "status", "--porcelain");
    const configBefore = readFileSync(join(box.ws, ".git/config"), "utf8");

    const repo = await openShadowRepo(box.ws, { home: box.home });
    const first = await repo.snapshot();
    write(box.ws, "src/app.ts", "export const a = 3;\n");
    const second = await repo.snapshot();
    await repo.restore(first.commit);

    expect(repo.gitDir).toBe(shadowGitDir(box.home, repo.workspace));
    expect(repo.gitDir.startsWith(join(box.home, "snapshots"))).toBe(true);
    expect(second.changed).toEqual([{ path: "src/app.ts", status: "modified", additions: 1, deletions: 1 }]);
    expect(sha256(readFileSync(join(box.ws, ".git/index")))).toBe(indexBefore);
    expect(userGit(box.ws, "rev-parse", "HEAD")).toBe(headBefore);
    expect(userGit(box.ws, "status", "--porcelain")).toBe(statusBefore);
    expect(readFileSync(join(box.ws, ".git/config"), "utf8")).toBe(configBefore);
    expect(existsSync(join(box.ws, "HOOK-RAN"))).toBe(false);
    expect([...snapshotEntries(repo.gitDir, first.commit).keys()].some((path) => path.startsWith(".git"))).toBe(false);
  });

  it("ignores GIT_DIR, GIT_INDEX_FILE and GIT_WORK_TREE inherited from the environment", async () => {
    write(box.ws, "a.txt", "a\n");
    userGit(box.ws, "init", "-q");
    const saved = { ...process.env };
    process.env.GIT_DIR = join(box.ws, ".git");
    process.env.GIT_INDEX_FILE = join(box.ws, ".git/index");
    process.env.GIT_WORK_TREE = box.root;
    try {
      const repo = await openShadowRepo(box.ws, { home: box.home });
      const { commit } = await repo.snapshot();
      expect([...snapshotEntries(repo.gitDir, commit).keys()]).toEqual(["a.txt"]);
    } finally {
      process.env = saved;
    }
    expect(existsSync(join(box.ws, ".git/index"))).toBe(false);
  });

  it("reuses the previous commit when nothing changed", async () => {
    write(box.ws, "a.txt", "a\n");
    const repo = await openShadowRepo(box.ws, { home: box.home });
    const first = await repo.snapshot();
    const again = await repo.snapshot();
    expect(again).toEqual({ commit: first.commit, changed: [], skipped: [] });
    expect(await repo.latest()).toBe(first.commit);
  });

  it("reports added, modified, deleted, renamed and binary files with line counts", async () => {
    write(box.ws, "keep.txt", "one\ntwo\nthree\n");
    write(box.ws, "gone.txt", "bye\n");
    write(box.ws, "old-name.txt", Array.from({ length: 40 }, (_, i) => `line ${i}`).join("\n"));
    write(box.ws, "image.bin", Buffer.from([0, 1, 2, 3, 255]));
    const repo = await openShadowRepo(box.ws, { home: box.home });
    await repo.snapshot();

    write(box.ws, "keep.txt", "one\nTWO\nthree\nfour\n");
    rmSync(join(box.ws, "gone.txt"));
    renameSync(join(box.ws, "old-name.txt"), join(box.ws, "new-name.txt"));
    write(box.ws, "image.bin", Buffer.from([0, 1, 2, 3, 254, 0]));
    write(box.ws, "added.txt", "hello\n");
    const { changed } = await repo.snapshot();

    const byPath = Object.fromEntries(changed.map((change) => [change.path, change]));
    expect(byPath["keep.txt"]).toEqual({ path: "keep.txt", status: "modified", additions: 2, deletions: 1 });
    expect(byPath["gone.txt"]).toEqual({ path: "gone.txt", status: "deleted", additions: 0, deletions: 1 });
    expect(byPath["new-name.txt"]).toEqual({
      path: "new-name.txt",
      status: "renamed",
      oldPath: "old-name.txt",
      additions: 0,
      deletions: 0,
    });
    expect(byPath["image.bin"]).toEqual({
      path: "image.bin",
      status: "modified",
      additions: 0,
      deletions: 0,
      binary: true,
    });
    expect(byPath["added.txt"]).toEqual({ path: "added.txt", status: "added", additions: 1, deletions: 0 });
    expect(changed).toHaveLength(5);
  });

  it("captures files created and deleted by a shell command", async () => {
    write(box.ws, "doomed.txt", "x\n");
    const repo = await openShadowRepo(box.ws, { home: box.home });
    await repo.snapshot();
    execSync("mkdir -p gen && for i in 1 2 3; do echo $i > gen/f$i.txt; done && rm doomed.txt && chmod +x gen/f1.txt", {
      cwd: box.ws,
    });
    const { commit, changed } = await repo.snapshot();
    expect(changed.map((change) => `${change.status} ${change.path}`).sort()).toEqual([
      "added gen/f1.txt",
      "added gen/f2.txt",
      "added gen/f3.txt",
      "deleted doomed.txt",
    ]);
    expect(snapshotEntries(repo.gitDir, commit).get("gen/f1.txt")).toBe("100755");
  });

  it("leaves out node_modules, build output and .gitignore'd paths, and applies a later .gitignore", async () => {
    for (let i = 0; i < 1500; i++) write(box.ws, `node_modules/pkg${i % 30}/file${i}.js`, `module.exports = ${i};\n`);
    write(box.ws, ".next/cache/x", "x");
    write(box.ws, "packages/web/dist/bundle.js", "bundle");
    write(box.ws, "py/__pycache__/m.pyc", "pyc");
    write(box.ws, ".worldline/cache/tmp", "cache");
    write(box.ws, ".worldline/skills/s/SKILL.md", "# skill");
    write(box.ws, ".gitignore", "*.log\n");
    write(box.ws, "sub/.gitignore", "secret/\n");
    write(box.ws, "sub/secret/key", "k");
    write(box.ws, "debug.log", "log");
    write(box.ws, "data/big.csv", "a,b\n");
    write(box.ws, "src/index.ts", "ok");
    const repo = await openShadowRepo(box.ws, { home: box.home });
    const first = await repo.snapshot();
    expect([...snapshotEntries(repo.gitDir, first.commit).keys()].sort()).toEqual([
      ".gitignore",
      ".worldline/skills/s/SKILL.md",
      "data/big.csv",
      "src/index.ts",
      "sub/.gitignore",
    ]);

    write(box.ws, ".gitignore", "*.log\ndata/\n");
    const second = await repo.snapshot();
    expect(snapshotEntries(repo.gitDir, second.commit).has("data/big.csv")).toBe(false);
    expect(second.changed.map((change) => `${change.status} ${change.path}`).sort()).toEqual([
      "deleted data/big.csv",
      "modified .gitignore",
    ]);
  });

  it("snapshots nested repositories and submodule-like folders as plain files, never their .git", async () => {
    write(box.ws, "top.txt", "top");
    write(box.ws, "vendor/lib/lib.c", "int x;");
    userGit(join(box.ws, "vendor/lib"), "init", "-q");
    userGit(join(box.ws, "vendor/lib"), "add", ".");
    userGit(join(box.ws, "vendor/lib"), "commit", "-qm", "lib");
    write(box.ws, "vendor/lib/plugins/p/p.c", "int p;"); // a repository inside the nested one
    userGit(join(box.ws, "vendor/lib/plugins/p"), "init", "-q");
    write(box.ws, "scratch/notes.md", "no commits yet"); // a nested repository with no commit at all
    userGit(join(box.ws, "scratch"), "init", "-q");
    write(box.ws, "modules/sm/.git", "gitdir: ../../.git/modules/sm\n"); // how a submodule checkout looks
    write(box.ws, "modules/sm/code.py", "print(1)");
    const nestedIndex = sha256(readFileSync(join(box.ws, "vendor/lib/.git/index")));

    const repo = await openShadowRepo(box.ws, { home: box.home });
    const first = await repo.snapshot();
    const entries = snapshotEntries(repo.gitDir, first.commit);
    expect([...entries.keys()].sort()).toEqual([
      "modules/sm/code.py",
      "scratch/notes.md",
      "top.txt",
      "vendor/lib/lib.c",
      "vendor/lib/plugins/p/p.c",
    ]);
    expect([...entries.values()].every((mode) => mode !== "160000")).toBe(true);

    write(box.ws, "vendor/lib/new.c", "int n;");
    rmSync(join(box.ws, "vendor/lib/lib.c"));
    const second = await repo.snapshot();
    expect(second.changed.map((change) => `${change.status} ${change.path}`).sort()).toEqual([
      "added vendor/lib/new.c",
      "deleted vendor/lib/lib.c",
    ]);

    await repo.restore(first.commit);
    expect(readFileSync(join(box.ws, "vendor/lib/lib.c"), "utf8")).toBe("int x;");
    expect(existsSync(join(box.ws, "vendor/lib/new.c"))).toBe(false);
    expect(sha256(readFileSync(join(box.ws, "vendor/lib/.git/index")))).toBe(nestedIndex);
    expect(readFileSync(join(box.ws, "modules/sm/.git"), "utf8")).toBe("gitdir: ../../.git/modules/sm\n");
  });

  it("stores symlinks as links and never reads through one pointing outside", async () => {
    write(box.root, "outside/secret.txt", "outside");
    write(box.ws, "real.txt", "real");
    symlinkSync(join(box.root, "outside"), join(box.ws, "out-dir"));
    symlinkSync("../outside/secret.txt", join(box.ws, "out-file"));
    symlinkSync("real.txt", join(box.ws, "alias"));
    const repo = await openShadowRepo(box.ws, { home: box.home });
    const { commit } = await repo.snapshot();
    const entries = snapshotEntries(repo.gitDir, commit);
    expect(Object.fromEntries(entries)).toEqual({
      alias: "120000",
      "out-dir": "120000",
      "out-file": "120000",
      "real.txt": "100644",
    });
  });

  it("skips files over the per-file limit and reports them", async () => {
    write(box.ws, "small.txt", "small");
    write(box.ws, "huge.bin", Buffer.alloc(4096, 1));
    const repo = await openShadowRepo(box.ws, { home: box.home, maxFileBytes: 1024 });
    const { commit, skipped } = await repo.snapshot();
    expect([...snapshotEntries(repo.gitDir, commit).keys()]).toEqual(["small.txt"]);
    expect(skipped).toHaveLength(1);
    expect(skipped[0].path).toBe("huge.bin");
    expect(skipped[0].reason).toMatch(/per-file limit/);
    expect(await repo.skippedIn(commit)).toEqual(skipped);
  });

  it("stops at the per-snapshot limit, reports the rest, and captures it in later snapshots", async () => {
    for (let i = 0; i < 10; i++) write(box.ws, `f${i}.txt`, "x".repeat(100));
    const repo = await openShadowRepo(box.ws, { home: box.home, maxSnapshotBytes: 450 });
    const first = await repo.snapshot();
    expect(snapshotEntries(repo.gitDir, first.commit).size).toBe(4);
    expect(first.skipped.map((entry) => entry.path)).toEqual([
      "f4.txt",
      "f5.txt",
      "f6.txt",
      "f7.txt",
      "f8.txt",
      "f9.txt",
    ]);
    expect(first.skipped.every((entry) => /snapshot size limit/.test(entry.reason))).toBe(true);
    const second = await repo.snapshot();
    const third = await repo.snapshot();
    expect(snapshotEntries(repo.gitDir, third.commit).size).toBe(10);
    expect(second.skipped).toHaveLength(2);
    expect(third.skipped).toEqual([]);
  });

  it("keeps bytes exact whatever the workspace's .gitattributes say", async () => {
    write(box.ws, ".gitattributes", "* text eol=crlf\n*.dat filter=lfs\n");
    write(box.ws, "unix.txt", "a\nb\n");
    write(box.ws, "dos.txt", "a\r\nb\r\n");
    write(box.ws, "x.dat", "payload");
    const repo = await openShadowRepo(box.ws, { home: box.home });
    const first = await repo.snapshot();
    rmSync(join(box.ws, "unix.txt"));
    rmSync(join(box.ws, "dos.txt"));
    writeFileSync(join(box.ws, "x.dat"), "changed");
    await repo.restore(first.commit);
    expect(readFileSync(join(box.ws, "unix.txt"), "utf8")).toBe("a\nb\n");
    expect(readFileSync(join(box.ws, "dos.txt"), "utf8")).toBe("a\r\nb\r\n");
    expect(readFileSync(join(box.ws, "x.dat"), "utf8")).toBe("payload");
  });

  it("serializes concurrent snapshots from two handles on one workspace", async () => {
    write(box.ws, "a.txt", "0");
    const [one, two] = await Promise.all([
      openShadowRepo(box.ws, { home: box.home }),
      openShadowRepo(box.ws, { home: box.home }),
    ]);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => {
        write(box.ws, `file${i}.txt`, `${i}`);
        return (i % 2 ? one : two).snapshot();
      }),
    );
    const latest = await one.latest();
    expect(results.at(-1)?.commit).toBe(latest);
    expect([...snapshotEntries(one.gitDir, latest as string).keys()]).toHaveLength(7);
  });

  it("never snapshots its own data folder when it lives inside the workspace", async () => {
    write(box.ws, "a.txt", "a");
    const home = join(box.ws, ".wl-home");
    const repo = await openShadowRepo(box.ws, { home });
    const first = await repo.snapshot();
    write(box.ws, "b.txt", "b");
    const second = await repo.snapshot();
    expect(repo.gitDir.startsWith(home)).toBe(true);
    expect([...snapshotEntries(repo.gitDir, first.commit).keys()]).toEqual(["a.txt"]);
    expect(second.changed.map((change) => change.path)).toEqual(["b.txt"]);
  });

  // As root every folder is readable (CI runs as root), so the snapshot then runs with the effective
  // uid of `nobody` (this test file's own worker process only): git is refused the folder as a user is.
  it("reports folders it cannot read as skipped", async () => {
    write(box.ws, "open/a.txt", "a");
    write(box.ws, "locked/b.txt", "b");
    const asRoot = process.getuid?.() === 0;
    if (asRoot) execSync(`chmod -R a+rwX ${JSON.stringify(box.root)}`);
    chmodSync(join(box.ws, "locked"), 0o000);
    try {
      if (asRoot) process.seteuid!(NOBODY);
      const repo = await openShadowRepo(box.ws, { home: box.home });
      const { skipped } = await repo.snapshot();
      expect(skipped.map((entry) => entry.path)).toEqual(["locked/"]);
    } finally {
      if (asRoot) process.seteuid!(0);
      chmodSync(join(box.ws, "locked"), 0o755);
    }
  });

  it("refuses a workspace that does not exist, or no longer does", async () => {
    await expect(openShadowRepo(join(box.root, "missing"), { home: box.home })).rejects.toMatchObject({
      code: "checkpoint:workspace_missing",
    });
    const repo = await openShadowRepo(box.ws, { home: box.home });
    rmSync(box.ws, { recursive: true });
    await expect(repo.snapshot()).rejects.toMatchObject({ code: "checkpoint:workspace_missing" });
  });

  it("records an empty folder tree as nothing and a file turned folder as its files", async () => {
    write(box.ws, "thing", "file");
    const repo = await openShadowRepo(box.ws, { home: box.home });
    await repo.snapshot();
    rmSync(join(box.ws, "thing"));
    mkdirSync(join(box.ws, "thing"));
    write(box.ws, "thing/inside.txt", "now a folder");
    mkdirSync(join(box.ws, "empty"));
    const { commit } = await repo.snapshot();
    expect([...snapshotEntries(repo.gitDir, commit).keys()]).toEqual(["thing/inside.txt"]);
  });
});
