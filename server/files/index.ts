export { WorkspaceFiles, SEARCH_CACHE_MS, SEARCH_FILE_CAP, SEARCH_RESULT_LIMIT } from "./service";
export type { FilesChangedListener } from "./service";
export { MAX_EDIT_BYTES, hashOf } from "./content";
export type { FileContent } from "./content";
export type { TreeEntry } from "./tree";
export type { GitMarker } from "./git-status";
export { parsePorcelain } from "./git-status";
export { fuzzyFilter, fuzzyScore } from "./fuzzy";
export { MAX_WATCHED_DIRS, DirWatcher } from "./watcher";
