/** The seam between the agent's tools and a workspace: this machine (LocalHost) or a runner (server/runners). */
export type {
  DirEntry,
  ExecSpec,
  ExitInfo,
  FileStat,
  GlobMatch,
  HostProcess,
  PageRequest,
  StdioProcess,
  StdioSpec,
  TextPage,
  WorkspaceHost,
  WorkspacePromptFiles,
} from "./types";
export { LocalHost, localHost } from "./local";
export { isWithin, resolveInWorkspace, writeResolvedFile, type ResolvedPath } from "./paths";
export type { SearchOutcome, SearchRequest } from "./search/types";
export { toPosix } from "./walk";
