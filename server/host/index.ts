/** The seam between everything and a workspace: this machine (LocalWorkspaceHost) or a runner (server/runners). */
export type {
  DirEntry,
  ExecSpec,
  ExitInfo,
  Fence,
  FilesPort,
  FileStat,
  GlobMatch,
  HostProcess,
  PageRequest,
  ResolvedPage,
  StdioProcess,
  StdioSpec,
  TextPage,
  ToolHost,
  WorkspaceHost,
  WorkspacePromptFiles,
} from "./types";
export { LocalHost, LocalWorkspaceHost, localHost } from "./local";
export { WorkspaceHosts } from "./hosts";
export { isWithin, realpathLoose, resolveInWorkspace, writeResolvedFile, type ResolvedPath } from "./paths";
export type { SearchOutcome, SearchRequest } from "./search/types";
export { toPosix } from "./walk";
