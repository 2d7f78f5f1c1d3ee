import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { listDir } from "../../../server/files/tree.ts";
import { WorkspaceIgnore } from "../../../server/ignore/index.ts";
import { userGit } from "../checkpoints/helpers.ts";

let root: string;
let ws: string;

function put(rel: string, content = "x\n"): void {
  const absolute = join(ws, rel);
  mkdirSync(dirname(absolute), { recursive: true });
  writeFileSync(absolute, content);
}

/** Every file the tree lists under `dir`, unfolding each folder it lists. */
async function treeFiles(dir = "", showIgnored = false): Promise<string[]> {
  const rules = new WorkspaceIgnore(ws);
  const { entries } = await listDir(ws, rules, dir, showIgnored);
  const files: string[] = [];
  for (const entry of entries) {
    if (entry.type === "dir") files.push(...(await treeFiles(entry.path, showIgnored)));
    else files.push(entry.path);
  }
  return files.sort();
}

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "wl-tree-git-")));
  ws = join(root, "ws");
  mkdirSync(ws);
  put(".gitignore", "dist/\n*.log\n");
  put("src/index.ts");
  put("dist/app.js");
  put("dist/chunk.js");
  put("debug.log");
  put("secret.txt");
  put("notes.bak");
  put("build-cache/blob");
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("the file tree in a git repository", () => {
  beforeEach(() => {
    userGit(ws, "init", "-q");
    // Rules outside .gitignore files: the repository's exclude file and a core.excludesFile.
    writeFileSync(join(ws, ".git/info/exclude"), "secret.txt\nbuild-cache/\n");
    writeFileSync(join(root, "excludes"), "*.bak\n");
    userGit(ws, "config", "core.excludesFile", join(root, "excludes"));
    // A tracked file under an ignored folder: git never treats it as ignored.
    userGit(ws, "add", "-f", "dist/app.js");
    userGit(ws, "commit", "-q", "-m", "ship the bundle");
  });

  it("hides what git ignores, exclude file and core.excludesFile included, and shows a force-added file", async () => {
    expect(await treeFiles()).toEqual([".gitignore", "dist/app.js", "src/index.ts"]);
    const rootLevel = await listDir(ws, new WorkspaceIgnore(ws), "", true);
    const marked = Object.fromEntries(rootLevel.entries.map((entry) => [entry.name, entry.ignored ?? false]));
    expect(marked).toEqual({
      "build-cache": true,
      dist: false,
      src: false,
      ".gitignore": false,
      "debug.log": true,
      "notes.bak": true,
      "secret.txt": true,
    });
    expect(await treeFiles("", true)).toEqual([
      ".gitignore",
      "build-cache/blob",
      "debug.log",
      "dist/app.js",
      "dist/chunk.js",
      "notes.bak",
      "secret.txt",
      "src/index.ts",
    ]);
  });

  it("follows git between listings: a file added with -f shows, an emptied exclude file unhides", async () => {
    const rules = new WorkspaceIgnore(ws);
    expect((await listDir(ws, rules, "dist")).entries.map((entry) => entry.name)).toEqual(["app.js"]);
    userGit(ws, "add", "-f", "dist/chunk.js");
    writeFileSync(join(ws, ".git/info/exclude"), "");
    expect((await listDir(ws, rules, "dist")).entries.map((entry) => entry.name)).toEqual(["app.js", "chunk.js"]);
    expect((await listDir(ws, rules, "")).entries.map((entry) => entry.name)).toContain("secret.txt");
  });

  it("a folder of a repository answers for its own entries (the workspace is a subfolder)", async () => {
    put("pkg/dist/out.js");
    put("pkg/secret.txt");
    put("pkg/keep.ts");
    const sub = join(ws, "pkg");
    const { entries } = await listDir(sub, new WorkspaceIgnore(sub), "");
    expect(entries.map((entry) => entry.name)).toEqual(["keep.ts"]);
  });
});

describe("the file tree outside a git repository", () => {
  it("matches the .gitignore files, as git would in a repository", async () => {
    expect(await treeFiles()).toEqual([".gitignore", "build-cache/blob", "notes.bak", "secret.txt", "src/index.ts"]);
  });
});
