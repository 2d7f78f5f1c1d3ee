import { mkdirSync, mkdtempSync, realpathSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openShadowRepo } from "../../../server/checkpoints/index.ts";
import { listDir, walkFiles as treeFiles } from "../../../server/files/tree.ts";
import { WorkspaceIgnore } from "../../../server/ignore/index.ts";
import { searchWithJavaScript } from "../../../server/host/search/js-search.ts";
import { findRipgrep, searchWithRipgrep } from "../../../server/host/search/ripgrep.ts";
import type { SearchRequest } from "../../../server/host/search/types.ts";
import { walkFiles as searchFiles } from "../../../server/host/walk.ts";
import { snapshotEntries, userGit } from "../checkpoints/helpers.ts";

let root: string;
let ws: string;
let home: string;

function put(rel: string, content = "x\n"): void {
  const absolute = join(ws, rel);
  mkdirSync(dirname(absolute), { recursive: true });
  writeFileSync(absolute, content);
}

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "wl-ignore-")));
  ws = join(root, "ws");
  home = join(root, "home");
  mkdirSync(ws);
  put(".gitignore", "*.log\nprivate/\n");
  put("a.txt");
  put("debug.log");
  put("private/notes.txt");
  put("src/.gitignore", "generated/\n*.tmp\n");
  put("src/index.ts");
  put("src/notes.tmp");
  put("src/generated/g.ts");
  put("src/deep/more/file.ts");
  put("src/node_modules/dep/index.js");
  put("lib/.gitignore", "!important.log\n");
  put("lib/important.log");
  put("lib/other.txt");
  put("node_modules/pkg/index.js");
  put("dist/bundle.js");
  put("py/__pycache__/m.cpython-312.pyc");
  put("py/m.py");
  userGit(ws, "init", "-q"); // a real .git folder, which no view may list
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const EXPECTED = [
  ".gitignore",
  "a.txt",
  "lib/.gitignore",
  "lib/important.log",
  "lib/other.txt",
  "py/m.py",
  "src/.gitignore",
  "src/deep/more/file.ts",
  "src/index.ts",
];

/** What git does not ignore but search and checkpoints skip (heavy or generated): the tree shows it. */
const SKIPPED_BUT_TRACKABLE = [
  "dist/bundle.js",
  "node_modules/pkg/index.js",
  "py/__pycache__/m.cpython-312.pyc",
  "src/node_modules/dep/index.js",
];
/** What the workspace's .gitignore files leave out. */
const GIT_IGNORED = ["debug.log", "private/notes.txt", "src/generated/g.ts", "src/notes.tmp"];

async function treeListing(rules: WorkspaceIgnore, dir = "", showIgnored = false): Promise<string[]> {
  const { entries } = await listDir(ws, rules, dir, showIgnored);
  const files: string[] = [];
  for (const entry of entries) {
    if (entry.type === "dir") files.push(...(await treeListing(rules, entry.path, showIgnored)));
    else files.push(entry.path);
  }
  return files;
}

/** Files grep finds with a pattern every non-empty file matches. */
async function grepped(search: (request: SearchRequest) => Promise<{ files: { absolute: string }[] }>) {
  const request = { pattern: ".", root: ws, ignoreCase: false, contextLines: 0, include: [], exclude: [] };
  const outcome = await search({ ...request, maxMatches: 1_000 });
  return outcome.files.map((file) => file.absolute.slice(ws.length + 1)).sort();
}

describe("one ignore engine", () => {
  it("@-mentions, glob/grep and the checkpoint snapshot list the same files", async () => {
    const mentions = (await treeFiles(ws, new WorkspaceIgnore(ws), 1_000)).files.sort();
    const search: string[] = [];
    for await (const file of searchFiles(ws)) search.push(file.relative);
    const repo = await openShadowRepo(ws, { home });
    const { commit } = await repo.snapshot();
    const snapshot = [...snapshotEntries(repo.gitDir, commit).keys()].sort();

    expect(mentions).toEqual(EXPECTED);
    expect(search.sort()).toEqual(EXPECTED);
    expect(snapshot).toEqual(EXPECTED);
    expect(await grepped(searchWithJavaScript)).toEqual(EXPECTED);
  });

  it("the file tree hides only what git ignores, plus .git; shown, ignored entries are marked", async () => {
    const rules = new WorkspaceIgnore(ws);
    expect((await treeListing(rules)).sort()).toEqual([...EXPECTED, ...SKIPPED_BUT_TRACKABLE].sort());
    const all = (await treeListing(rules, "", true)).sort();
    expect(all).toEqual([...EXPECTED, ...SKIPPED_BUT_TRACKABLE, ...GIT_IGNORED].sort());
    expect(all.some((file) => file.startsWith(".git/"))).toBe(false);
    const root = await listDir(ws, rules, "", true);
    expect(root.entries.find((entry) => entry.name === "private")?.ignored).toBe(true);
    expect(root.entries.find((entry) => entry.name === "dist")?.ignored).toBeUndefined();
  });

  it.skipIf(!findRipgrep())("grep through ripgrep skips the same files", async () => {
    const rg = findRipgrep() as string;
    expect(await grepped((request) => searchWithRipgrep(rg, request))).toEqual(EXPECTED);
  });

  it("sees a .gitignore edit in a long-lived tree", async () => {
    const rules = new WorkspaceIgnore(ws);
    expect(await rules.ignored("a.txt", false)).toBe(false);
    put(".gitignore", "*.log\nprivate/\na.txt\n");
    const later = new Date(Date.now() + 5_000);
    utimesSync(join(ws, ".gitignore"), later, later);
    expect(await rules.ignored("a.txt", false)).toBe(true);
  });
});
