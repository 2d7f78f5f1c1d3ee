import { copyFile, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import { statOrNull } from "../stat-or-null.ts";
import { git, joinNul, splitNul, type GitTarget } from "./git.ts";

/**
 * The first snapshot of a workspace that is a git repository, built from what git already knows.
 *
 * Hashing a whole work tree into a new shadow store costs seconds per hundred MB. A repository's
 * index already holds every tracked file's blob id with the stat data it had when git last looked,
 * and its object store holds the blobs. So a new shadow repository borrows both:
 * - `objects/info/alternates` points at the repository's object store (for a linked worktree, the
 *   main repository's, which every worktree shares), so blobs git already has are never copied;
 * - the shadow index starts as a copy of the repository's index (its modification time kept, so
 *   git's racy-entry check still re-reads files changed in the same tick as that index was
 *   written), and the first `git status` re-hashes only the files whose stat data changed.
 *
 * Entries git would not look at afresh are dropped from the copy, so the work tree decides them:
 * skip-worktree and assume-unchanged entries (git trusts them without a stat), gitlinks (nested
 * repositories are snapshotted as plain files), and unmerged stages. An index git cannot read
 * here (a split index, a sparse index, a newer format) is not used; the snapshot hashes
 * everything as for any folder. The repository's own `.git` is only read, never written.
 */

/** Index file signature, then versions git 2.x reads. */
const INDEX_SIGNATURE = "DIRC";
const INDEX_VERSIONS = new Set([2, 3, 4]);
/** A sparse index's folder entry: a whole folder git has not checked out. */
const SPARSE_DIR_MODE = "040000";

export interface GitRepository {
  /** The object store (the common dir's `objects`). */
  objects: string;
  /** The index of this work tree. */
  index: string;
}

/** The repository whose top level is `workTree` (a `.git` folder, or a `.git` file of a linked worktree). */
export async function repositoryAt(workTree: string): Promise<GitRepository | undefined> {
  const dotGit = join(workTree, ".git");
  const info = await statOrNull(dotGit);
  if (!info) return undefined;
  let gitDir = dotGit;
  if (info.isFile()) {
    const pointer = /^gitdir: (.+)$/m.exec(await readFile(dotGit, "utf8"))?.[1]?.trim();
    if (!pointer) return undefined;
    gitDir = resolve(workTree, pointer);
  } else if (!info.isDirectory()) return undefined;
  const commonPointer = (await readFile(join(gitDir, "commondir"), "utf8").catch(() => undefined))?.trim();
  const commonDir = commonPointer ? resolve(gitDir, commonPointer) : gitDir;
  const objects = join(commonDir, "objects");
  if (!(await statOrNull(objects))?.isDirectory() || !isAbsolute(objects)) return undefined;
  return { objects, index: join(gitDir, "index") };
}

/** Whether this is an index file git reads (a split index's shared part is checked by git itself, below). */
async function readableIndex(path: string): Promise<boolean> {
  const bytes = await readFile(path).catch(() => undefined); // no index yet: nothing to borrow
  if (!bytes || bytes.length < 12 || bytes.toString("latin1", 0, 4) !== INDEX_SIGNATURE) return false;
  return INDEX_VERSIONS.has(bytes.readUInt32BE(4));
}

/**
 * Makes a fresh shadow repository borrow `repo`'s objects and index. Returns false (leaving the
 * shadow as it was) when the index cannot be used.
 */
export async function seedFromRepository(target: GitTarget, repo: GitRepository): Promise<boolean> {
  if (!(await readableIndex(repo.index))) return false;
  const times = await stat(repo.index);
  await writeFile(join(target.gitDir, "objects", "info", "alternates"), `${repo.objects}\n`);
  // Copied beside, then renamed: a crash half-way never leaves a torn index for git to choke on.
  const copy = `${target.indexFile}.seed`;
  await copyFile(repo.index, copy);
  await utimes(copy, times.atime, times.mtime);
  await rename(copy, target.indexFile);
  // A split index names its shared part in the repository's git dir, which git cannot find from here: it fails.
  const listed = await git(target, ["ls-files", "--sparse", "-v", "-s", "-z"], { okCodes: [128] });
  const records = listed.code === 0 ? splitNul(listed.stdout) : [];
  if (listed.code !== 0 || records.some((record) => record.split(" ")[1] === SPARSE_DIR_MODE)) {
    await unseed(target);
    return false;
  }
  const drop = new Set<string>();
  for (const record of records) {
    // `<tag> <mode> <blob> <stage>\t<path>`: tag H is a plain cached entry.
    const tab = record.indexOf("\t");
    const [tag, mode, , stage] = record.slice(0, tab).split(" ");
    if (tag !== "H" || mode === "160000" || stage !== "0") drop.add(record.slice(tab + 1));
  }
  if (drop.size > 0)
    await git(target, ["update-index", "--force-remove", "-z", "--stdin"], { input: joinNul([...drop]) });
  return true;
}

/** Back to an unseeded shadow: no borrowed index or objects. */
async function unseed(target: GitTarget): Promise<void> {
  await rm(target.indexFile, { force: true });
  await rm(join(target.gitDir, "objects", "info", "alternates"), { force: true });
}
