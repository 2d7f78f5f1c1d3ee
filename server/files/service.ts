import type { ProtectedHome } from "../config";
import { readContent, writeContent, type FileContent } from "./content";
import { WorkspaceIgnore } from "../ignore";
import { fuzzyFilter } from "./fuzzy";
import { gitStatus, type GitMarker } from "./git-status";
import { listDir, walkFiles, type TreeEntry } from "./tree";
import { DirWatcher } from "./watcher";

/** @-mention search walks the workspace at most this often; a change invalidates it sooner. */
export const SEARCH_CACHE_MS = 15_000;
/** Mentions search this many files at most; a huge monorepo still answers fast. */
export const SEARCH_FILE_CAP = 50_000;
export const SEARCH_RESULT_LIMIT = 50;
/** git status is asked at most this often per workspace. */
const GIT_CACHE_MS = 1_000;

export type FilesChangedListener = (workspace: string, paths: string[]) => void;

interface WorkspaceState {
  rules: WorkspaceIgnore;
  watcher: DirWatcher;
  index: { at: number; files: string[]; truncated: boolean } | null;
  git: { at: number; markers: Promise<Record<string, GitMarker> | null> } | null;
}

/**
 * The workspace as the IDE sees it: a filtered tree, file contents with conflict
 * detection, git markers, fuzzy file search, and change events from a bounded
 * watcher. One state per workspace folder, shared by all its sessions.
 */
export class WorkspaceFiles {
  private readonly workspaces = new Map<string, WorkspaceState>();
  private readonly listeners = new Set<FilesChangedListener>();
  /** The data folder no file route reaches; none for tests that build files alone. */
  private readonly home?: ProtectedHome;

  constructor(options: { home?: ProtectedHome } = {}) {
    this.home = options.home;
  }

  onChange(listener: FilesChangedListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async list(
    root: string,
    dir: string,
    showIgnored = false,
  ): Promise<{ path: string; entries: TreeEntry[]; truncated: boolean }> {
    const ws = this.state(root);
    const listing = await listDir(root, ws.rules, dir, showIgnored, this.home);
    ws.watcher.watch(listing.path);
    return listing;
  }

  read(root: string, file: string): Promise<FileContent> {
    return readContent(root, file, this.home);
  }

  async write(root: string, file: string, input: { content: string; baseHash?: string | null; force?: boolean }) {
    return writeContent(root, file, input, this.home);
  }

  async search(
    root: string,
    query: string,
    limit = SEARCH_RESULT_LIMIT,
  ): Promise<{ files: string[]; truncated: boolean }> {
    const ws = this.state(root);
    if (!ws.index || Date.now() - ws.index.at > SEARCH_CACHE_MS) {
      const walked = await walkFiles(root, ws.rules, SEARCH_FILE_CAP, this.home);
      ws.index = { at: Date.now(), ...walked };
    }
    const files = query ? fuzzyFilter(query, ws.index.files, limit) : ws.index.files.slice(0, limit);
    return { files, truncated: ws.index.truncated };
  }

  gitStatus(root: string): Promise<Record<string, GitMarker> | null> {
    const ws = this.state(root);
    if (!ws.git || Date.now() - ws.git.at > GIT_CACHE_MS) ws.git = { at: Date.now(), markers: gitStatus(root) };
    return ws.git.markers;
  }

  close(): void {
    for (const ws of this.workspaces.values()) ws.watcher.close();
    this.workspaces.clear();
  }

  private state(root: string): WorkspaceState {
    let ws = this.workspaces.get(root);
    if (!ws) {
      const state: WorkspaceState = {
        rules: new WorkspaceIgnore(root),
        index: null,
        git: null,
        watcher: new DirWatcher(root, (paths) => {
          state.index = null;
          state.git = null;
          for (const listener of this.listeners) listener(root, paths);
        }),
      };
      ws = state;
      this.workspaces.set(root, ws);
    }
    return ws;
  }
}
