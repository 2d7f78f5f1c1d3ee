import fs, { type FSWatcher } from "node:fs";
import path from "node:path";

/**
 * Recursive fs.watch isn't available on Linux in Node 20, and a recursive poll of a
 * big tree is costly, so the watcher follows only the directories someone has
 * listed (the root and the folders open in a tree), non-recursively, up to a cap.
 */
export const MAX_WATCHED_DIRS = 256;
/** Editors and the agent write in bursts (temp file, rename, chmod): one event per burst. */
export const CHANGE_DEBOUNCE_MS = 120;

export class DirWatcher {
  private readonly watchers = new Map<string, FSWatcher>();
  private pending = new Set<string>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly root: string,
    private readonly onChange: (paths: string[]) => void,
  ) {}

  /** Starts watching `relDir` (posix, relative); the oldest watch is dropped past the cap. */
  watch(relDir: string): void {
    if (this.watchers.has(relDir)) {
      // Re-insert so the map order stays least-recently-listed first.
      const existing = this.watchers.get(relDir) as FSWatcher;
      this.watchers.delete(relDir);
      this.watchers.set(relDir, existing);
      return;
    }
    if (this.watchers.size >= MAX_WATCHED_DIRS) {
      const [oldest, watcher] = this.watchers.entries().next().value as [string, FSWatcher];
      watcher.close();
      this.watchers.delete(oldest);
    }
    try {
      const watcher = fs.watch(path.join(this.root, relDir), { persistent: false }, (_event, name) => {
        this.queue(name ? (relDir ? `${relDir}/${name}` : String(name)) : relDir);
      });
      watcher.on("error", () => this.unwatch(relDir)); // the folder went away
      this.watchers.set(relDir, watcher);
    } catch {
      // A folder that vanished between listing and watching has nothing to report.
    }
  }

  unwatch(relDir: string): void {
    this.watchers.get(relDir)?.close();
    this.watchers.delete(relDir);
  }

  get size(): number {
    return this.watchers.size;
  }

  close(): void {
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
    if (this.timer) clearTimeout(this.timer);
  }

  private queue(rel: string): void {
    this.pending.add(rel);
    this.timer ??= setTimeout(() => {
      this.timer = null;
      const paths = [...this.pending];
      this.pending = new Set();
      this.onChange(paths);
    }, CHANGE_DEBOUNCE_MS);
  }
}
