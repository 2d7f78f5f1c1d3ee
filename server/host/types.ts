import type { SnapshotRepo } from "../checkpoints/types";
import type { WorkspaceFiles } from "../files";
import type { SkillView } from "../protocol";
import type { PtyOpener } from "../pty";
import type { ResolvedPath } from "./paths";
import type { SearchOutcome, SearchRequest } from "./search/types";
import type { BundledProgram } from "./bundled";

/** What a stat tells the tools; `null` from `stat` means nothing is there. */
export interface FileStat {
  type: "file" | "dir" | "other";
  size: number;
  mtimeMs: number;
}

/** One entry of a folder, symlinks not followed (list_dir shows them as `name -> target`). */
export interface DirEntry {
  name: string;
  type: "file" | "dir" | "symlink" | "other";
  /** Files only. */
  size?: number;
  /** Symlinks only. */
  linkTarget?: string;
}

/** A page of a text file for read_file, lines already cut to `maxLineChars`. */
export type TextPage =
  | { kind: "missing" }
  | { kind: "directory" }
  | { kind: "binary"; size: number }
  | {
      kind: "page";
      lines: string[];
      /** Lines in the file, or -1 when streaming stopped early. */
      totalLines: number;
      note?: string;
    };

export interface PageRequest {
  offset: number;
  limit: number;
  maxLineChars: number;
}

/** A path the model gave, resolved, and a page of what it names. */
export interface ResolvedPage {
  resolved: ResolvedPath;
  page: TextPage;
}

export interface GlobMatch {
  absolute: string;
  mtimeMs: number;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A bash command to start in its own process group. */
export interface ExecSpec {
  command: string;
  cwd: string;
  /**
   * Environment on top of the host's own. The hub's environment (model keys, database URL)
   * is never part of it: a runner starts commands with its own.
   */
  env: Record<string, string | undefined>;
  /** Written to stdin, then stdin is closed (commands never wait for input). */
  stdin?: string;
  onOutput: (chunk: string) => void;
}

/** A running command and everything it started. */
export interface HostProcess {
  readonly pid: number;
  /** Waits for the shell to exit and its output to drain; leftovers holding the pipe are stopped. */
  finish(): Promise<{ exit: ExitInfo; leftoversStopped: boolean }>;
  /** SIGTERM to the whole group, SIGKILL after the grace period. */
  stop(graceMs?: number): Promise<void>;
}

/** A program to start with piped stdin, stdout and stderr (an MCP stdio server, an external ACP agent). */
export interface StdioSpec {
  command: string;
  args: string[];
  /**
   * A program that ships with Worldline: the host runs its own copy (server/host/bundled.ts) with
   * `args`, and `command` only names it. A runner's install is not where its hub's is.
   */
  bundled?: BundledProgram;
  cwd: string;
  /** Environment on top of the host's own (a runner's own, never the hub's). */
  env: Record<string, string>;
  /**
   * How much of the host's own environment it starts with: all of it (external agents, which
   * bring their own model keys), or only `BASIC_ENVIRONMENT` (MCP servers, as the MCP SDK does).
   */
  inherit: "all" | "basic";
  onStdout: (chunk: string) => void;
  onStderr: (chunk: string) => void;
  /**
   * Once, when it has exited. `lost`: its runner is gone and its end is unknown (code and signal
   * null), with the error that says so.
   */
  onExit: (exit: ExitInfo, lost?: Error) => void;
}

/** A running stdio program. */
export interface StdioProcess {
  readonly pid: number;
  /** Sent to its stdin, in order. */
  write(data: string): void;
  /** Ends it and everything it started (the one kill path, on the host's machine); resolves when it is gone. */
  stop(): Promise<void>;
}

/**
 * The operations the agent's tools use: paths, files, folders, search and commands. `LocalHost`
 * does them on this machine, in process (a runner does its requests with it too); a runner's host
 * (server/runners) sends the same operations over the runner's outbound connection. Paths are
 * absolute paths on the host's machine.
 */
export interface ToolHost {
  /** The runner's name, or null for this machine. */
  readonly runner: string | null;
  /** Resolves a path the model gave against the workspace, following symlinks (see paths.ts). */
  resolve(workspace: string, input: string): Promise<ResolvedPath>;
  stat(file: string): Promise<FileStat | null>;
  /** The file as UTF-8, or undefined when it does not exist. */
  readText(file: string): Promise<string | undefined>;
  /** `resolve`, then a page of the file it names: one round trip to a runner instead of two. */
  resolvePage(workspace: string, input: string, request: PageRequest): Promise<ResolvedPage>;
  /** Writes a resolved file without following a symlink planted since it was resolved. */
  writeResolved(resolved: ResolvedPath, content: string): Promise<void>;
  readDir(dir: string): Promise<DirEntry[]>;
  /** grep: ripgrep where the host has it, the JavaScript search otherwise. */
  search(request: SearchRequest): Promise<SearchOutcome>;
  /** Files under `root` (skip list, .gitignore and secret files left out) whose relative path matches `pattern`. */
  glob(root: string, pattern: string, signal: AbortSignal): Promise<GlobMatch[]>;
  exec(spec: ExecSpec): Promise<HostProcess>;
  /** Starts a program talking over stdio in the workspace (MCP servers, external agents). */
  spawnStdio(spec: StdioSpec): Promise<StdioProcess>;
}

/** What the IDE's file routes use of a workspace: the tree, the editor, @-mention search and git markers. */
export type FilesPort = Pick<WorkspaceFiles, "list" | "read" | "write" | "search" | "gitStatus">;

/** The session claim a turn's requests are made under (server/leases): a runner refuses an epoch below one it saw. */
export interface Fence {
  sessionId: string;
  epoch: number;
}

/**
 * Everything that touches a workspace: the tools' operations plus the file views, terminals,
 * the checkpoints' shadow repository, skills and the system prompt's files. A session's host
 * comes from `WorkspaceHosts.of(session.runner)` (hosts.ts), the one place that tells this
 * machine (`LocalWorkspaceHost`, today's code in process) from a runner (server/runners).
 */
export interface WorkspaceHost extends ToolHost {
  /** The IDE's views of the workspace (tree, editor, search, git markers). */
  readonly files: FilesPort;
  /**
   * Opens a terminal's shell in the workspace. `spawn.shell` empty means the host's login shell;
   * `spawn.env` holds the terminal's own variables, added to the host's own environment there.
   */
  readonly openPty: PtyOpener;
  /**
   * A folder for a new session: its real path, an existing directory the host may serve. `made`: the
   * bridge made it for the session (a fork, a worktree), the one way a runner's own forks folder is used.
   */
  checkWorkspace(workspace: string, options?: { made?: boolean }): Promise<string>;
  /**
   * Where worktree sessions' folders are made (server/worktrees): `<WORLDLINE_HOME>/worktrees` of the
   * host's machine (a runner's own home, which it serves beside its roots), never inside a repository.
   */
  worktreesFolder(): Promise<string>;
  /** The checkpoints' shadow repository of a workspace, kept where the workspace is. */
  snapshots(workspace: string): Promise<SnapshotRepo>;
  /** The workspace's own skills, read where they are. */
  workspaceSkills(workspace: string): Promise<SkillView[]>;
  /** The files the system prompt takes from the workspace, read where they are. */
  workspacePrompt(workspace: string): Promise<WorkspacePromptFiles>;
}

/** What agent/system-prompt.ts reads from a workspace: the override template, the top-level listing, AGENTS.md files. */
export interface WorkspacePromptFiles {
  template: string | undefined;
  listing: string;
  agentsMd: { path: string; text: string }[];
}
