import { readFileSync, type Stats } from "node:fs";
import { lstat, readdir, statfs } from "node:fs/promises";
import { join } from "node:path";
import { isSkipped } from "../ignore/index.ts";
import type { StageResult } from "./stage.ts";

/**
 * "Has anything in the work tree changed since the last snapshot?", answered in-process.
 *
 * Starting a process costs 5–10 ms on a busy machine, and `git status` is one at every agent
 * step, nearly always to learn that nothing changed. For a small work tree the bridge keeps the
 * stat data of every entry git would look at: each folder it walks (adding, removing or renaming
 * anything in a folder changes the folder's mtime) and each file and symlink (writing one changes
 * its mtime, ctime or size). When all of them stat the same, git would report nothing, and the
 * previous snapshot is the current one.
 *
 * It errs only one way, towards asking git:
 * - the stats are taken before git looks, so a write in between shows up next time as a change;
 * - an entry touched within RACY_MS of the stats could change again within the file system's
 *   timestamp granularity unseen ("racy git"): then no fingerprint is kept;
 * - folders pruned from the walk (the skip list) must be ones git itself reports ignored (or
 *   empty ones, recorded as folders), else the fingerprint is dropped;
 * - past MAX_ENTRIES, a nested repository, an unreadable folder, or a snapshot that left
 *   paths out (they may fit into the next one): no fingerprint, git decides.
 * What git reports ignored is left out, so a log file being written does not defeat it.
 */

/**
 * Work trees bigger than this are left to git's own stat cache. A stat costs 10–30 µs here; they
 * run on the thread pool, but each still costs the event loop a few µs.
 */
export const FINGERPRINT_MAX_ENTRIES = 2000;
/**
 * Entries changed this recently may change again within one timestamp tick unseen: not trusted
 * yet. Local Linux file systems stamp files with the kernel's coarse clock (one tick, ≤ 10 ms);
 * any other (FAT's 2 s, a network file system's own clock) gets the wide margin.
 */
const RACY_MS = { local: 100, other: 3000 };
/** statfs magic numbers of file systems with nanosecond timestamps from the local kernel clock. */
const LOCAL_FILE_SYSTEMS = new Set([
  0xef53, // ext2/3/4
  0x58465342, // xfs
  0x9123683e, // btrfs
  0x01021994, // tmpfs
  0x794c7630, // overlayfs
  0x2fc12fc1, // zfs
  0xf2f52010, // f2fs
]);

/** How long a change to `workTree` stays racy (see RACY_MS). */
export async function racyWindowMs(workTree: string): Promise<number> {
  try {
    return LOCAL_FILE_SYSTEMS.has((await statfs(workTree)).type) ? RACY_MS.local : RACY_MS.other;
  } catch {
    // an unknown file system gets the longer, safe window
    return RACY_MS.other;
  }
}

type StatKey = string;

const keyOf = (stats: Stats): StatKey => `${stats.mode}:${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;

/** A walk of the work tree before git looks at it, to be confirmed by git's list of ignored paths. */
export interface Walk {
  entries: Map<string, StatKey>;
  /** Paths the skip list kept out of the walk; git must report each ignored. */
  pruned: string[];
}

/** Thrown inside the walk to end it early: this state of the work tree cannot be fingerprinted. */
class WalkStop {}

/** Entries in git's index file (its header: "DIRC", version, count); 0 when there is none yet. */
export function indexEntryCount(indexFile: string): number {
  try {
    const header = readFileSync(indexFile).subarray(0, 12);
    return header.length === 12 && header.toString("latin1", 0, 4) === "DIRC" ? header.readUInt32BE(8) : 0;
  } catch {
    // no index (or unreadable): counted as empty, git rebuilds it
    return 0;
  }
}

/**
 * Walks `workTree` (paths relative, posix), folder by folder, the stats of each folder's entries
 * at once; undefined when this state of it cannot serve as a fingerprint (past
 * FINGERPRINT_MAX_ENTRIES, racy, a nested repository, unreadable).
 */
export async function walkWorkTree(workTree: string, racyMs: number): Promise<Walk | undefined> {
  const takenAt = Date.now();
  const entries = new Map<string, StatKey>();
  const pruned: string[] = [];
  const record = async (path: string) => {
    const stats = await lstat(join(workTree, path));
    if (Math.max(stats.mtimeMs, stats.ctimeMs) > takenAt - racyMs) throw new WalkStop();
    entries.set(path, keyOf(stats));
    if (entries.size > FINGERPRINT_MAX_ENTRIES) throw new WalkStop();
  };
  const walk = async (folder: string): Promise<void> => {
    await record(folder);
    const dirents = await readdir(join(workTree, folder), { withFileTypes: true });
    await Promise.all(
      dirents.map(async (dirent) => {
        const path = folder ? `${folder}/${dirent.name}` : dirent.name;
        if (dirent.name === ".git") {
          if (folder === "") return; // the workspace's own repository, never snapshotted
          throw new WalkStop(); // a nested repository: snapshotted as plain files, by git's walk alone
        }
        if (!dirent.isDirectory()) return isSkipped(path, false) ? void pruned.push(path) : record(path);
        if (!isSkipped(path, true)) return walk(path);
        // git lists no empty folder, ignored or not: one is recorded instead, to notice what arrives in it.
        if ((await readdir(join(workTree, path))).length > 0) pruned.push(path);
        else await record(path);
      }),
    );
  };
  try {
    await walk("");
  } catch {
    return undefined; // or unreadable, or changing under the walk: git will say what it is
  }
  return { entries, pruned };
}

export class Fingerprint {
  private constructor(
    private readonly workTree: string,
    private readonly entries: Map<string, StatKey>,
    /** The tree the snapshot wrote for this state of the work tree (it skipped nothing). */
    readonly tree: string,
  ) {}

  /**
   * The fingerprint of a walk that git then staged, given what its status listed as ignored
   * (`dir/` for folders). Undefined when git disagrees with a path the walk pruned.
   */
  static confirm(workTree: string, walk: Walk, staged: Required<StageResult>): Fingerprint | undefined {
    const { ignored, tree, skipped } = staged;
    // Paths left out (the snapshot's size budget, unreadable ones) may get in at the next snapshot
    // with the work tree unchanged: only a complete snapshot stands for its work tree.
    if (skipped.length > 0) return undefined;
    const ignoredSet = new Set(ignored);
    const isIgnored = (path: string) => {
      if (ignoredSet.has(path) || ignoredSet.has(`${path}/`)) return true;
      for (let end = path.lastIndexOf("/"); end > 0; end = path.lastIndexOf("/", end - 1))
        if (ignoredSet.has(path.slice(0, end + 1))) return true;
      return false;
    };
    if (!walk.pruned.every(isIgnored)) return undefined;
    const entries = new Map([...walk.entries].filter(([path]) => path === "" || !isIgnored(path)));
    return new Fingerprint(workTree, entries, tree);
  }

  /** True when every recorded entry stats exactly as it did: git would find nothing to stage. */
  async unchanged(): Promise<boolean> {
    try {
      const keys = await Promise.all(
        [...this.entries.keys()].map(async (path) => keyOf(await lstat(join(this.workTree, path)))),
      );
      return [...this.entries.values()].every((key, i) => keys[i] === key);
    } catch {
      return false; // something recorded is gone
    }
  }
}
