import { promises as fs } from "node:fs";
import path from "node:path";
import picomatch from "picomatch";
import type { ProtectedHome } from "../config";
import { WorldlineError } from "../errors";
import { realpathLoose, resolveInWorkspace, writeResolvedFile } from "./paths";
import { ProcessGroup } from "./process-group";
import { scrubEnvironment } from "../secrets";
import { readTextPage } from "./read-page";
import { startStdioProcess } from "./stdio-process";
import { statOrNull } from "../stat-or-null";
import { searchWithJavaScript } from "./search/js-search";
import { findRipgrep, searchWithRipgrep } from "./search/ripgrep";
import type {
  DirEntry,
  ExecSpec,
  FileStat,
  GlobMatch,
  HostProcess,
  PageRequest,
  ResolvedPage,
  StdioProcess,
  StdioSpec,
  ToolHost,
  WorkspaceHost,
} from "./types";
import { walkFiles } from "./walk";

export interface LocalHostOptions {
  /** Path of `rg`; undefined looks it up on PATH, null forces the JavaScript search. */
  ripgrep?: string | null;
  /** The bridge's data folder, which no tool opens; none for tools built alone (tests). */
  home?: ProtectedHome;
}

/** This machine, in process: the tools' file, search and process work as it always was. */
export class LocalHost implements ToolHost {
  readonly runner = null;
  private readonly ripgrep: string | undefined;
  private readonly home: ProtectedHome | undefined;

  constructor(options: LocalHostOptions = {}) {
    this.ripgrep = options.ripgrep === undefined ? findRipgrep() : (options.ripgrep ?? undefined);
    this.home = options.home;
  }

  /** Refused like a path outside the workspace, whatever an approval would say: see ProtectedHome. */
  async resolve(workspace: string, input: string) {
    const resolved = await resolveInWorkspace(workspace, input);
    if (this.home?.refuses(resolved.real, await realpathLoose(path.resolve(workspace))))
      throw new WorldlineError(
        "fs:outside_workspace",
        `${resolved.input} is in the bridge's own data folder (WORLDLINE_HOME), which no tool opens.`,
      );
    return resolved;
  }

  async stat(file: string): Promise<FileStat | null> {
    const stat = await statOrNull(file);
    if (!stat) return null;
    return {
      type: stat.isFile() ? "file" : stat.isDirectory() ? "dir" : "other",
      size: stat.size,
      mtimeMs: stat.mtimeMs,
    };
  }

  readText(file: string): Promise<string | undefined> {
    // Missing or unreadable both read as "no file": the tools say so in their own words.
    return fs.readFile(file, "utf8").catch(() => undefined);
  }

  readPage = readTextPage;

  async resolvePage(workspace: string, input: string, request: PageRequest): Promise<ResolvedPage> {
    const resolved = await this.resolve(workspace, input);
    return { resolved, page: await this.readPage(resolved.real, request) };
  }
  writeResolved = writeResolvedFile;

  async readDir(dir: string): Promise<DirEntry[]> {
    const entries = await fs.readdir(dir, { withFileTypes: true });
    return Promise.all(
      entries.map(async (entry): Promise<DirEntry> => {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) return { name: entry.name, type: "dir" };
        if (entry.isSymbolicLink())
          // A link that vanished since the listing still lists, its target unknown.
          return { name: entry.name, type: "symlink", linkTarget: await fs.readlink(full).catch(() => "?") };
        if (!entry.isFile()) return { name: entry.name, type: "other" };
        // An entry that vanished or cannot be read still lists, without a size.
        return { name: entry.name, type: "file", size: (await fs.stat(full).catch(() => undefined))?.size };
      }),
    );
  }

  async search(request: Parameters<ToolHost["search"]>[0]) {
    const outcome = await (this.ripgrep ? searchWithRipgrep(this.ripgrep, request) : searchWithJavaScript(request));
    const { home } = this;
    if (!home || !outcome.files.some((file) => home.refuses(file.absolute, request.root))) return outcome;
    // A search of a folder that holds the data folder: its files are left out of the answer.
    const files = outcome.files.filter((file) => !home.refuses(file.absolute, request.root));
    const matchCount = files.reduce((sum, file) => sum + file.lines.filter((line) => line.isMatch).length, 0);
    return { ...outcome, files, matchCount };
  }

  async glob(root: string, pattern: string, signal: AbortSignal): Promise<GlobMatch[]> {
    const matches = picomatch(pattern, { dot: true });
    const found: GlobMatch[] = [];
    for await (const file of walkFiles(root, signal)) {
      if (!matches(file.relative) || this.home?.refuses(file.absolute, root)) continue;
      // A match that vanished or cannot be read sorts last instead of failing the glob.
      const mtimeMs = (await fs.stat(file.absolute).catch(() => undefined))?.mtimeMs ?? 0;
      found.push({ absolute: file.absolute, mtimeMs });
    }
    return found;
  }

  async exec(spec: ExecSpec): Promise<HostProcess> {
    return new ProcessGroup({ ...spec, env: { ...scrubEnvironment(process.env), ...spec.env } as NodeJS.ProcessEnv });
  }

  spawnStdio(spec: StdioSpec): Promise<StdioProcess> {
    return startStdioProcess(spec, `stdio program ${spec.command}`);
  }
}

/** The tools' operations on this machine for tools given no host (tests, tools built alone). */
export const localHost = new LocalHost();

/**
 * This machine's services for its workspaces, built at the composition root (server/bridge/core.ts) from
 * the domains that own them (server/files, server/pty, server/checkpoints, server/skills,
 * server/agent, server/sessions): the host never imports them, so no import circle forms.
 */
export type LocalWorkspaceServices = Omit<WorkspaceHost, keyof ToolHost>;

/**
 * Every way a session on this machine reaches its workspace: the tools' operations (LocalHost)
 * and this machine's file views, terminals, shadow repositories, skills and prompt files, each
 * the local code called directly, in process.
 */
export class LocalWorkspaceHost extends LocalHost implements WorkspaceHost {
  readonly files: WorkspaceHost["files"];
  readonly openPty: WorkspaceHost["openPty"];
  readonly checkWorkspace: WorkspaceHost["checkWorkspace"];
  readonly worktreesFolder: WorkspaceHost["worktreesFolder"];
  readonly snapshots: WorkspaceHost["snapshots"];
  readonly workspaceSkills: WorkspaceHost["workspaceSkills"];
  readonly workspacePrompt: WorkspaceHost["workspacePrompt"];

  constructor(services: LocalWorkspaceServices, options: LocalHostOptions = {}) {
    super(options);
    this.files = services.files;
    this.openPty = services.openPty;
    this.checkWorkspace = services.checkWorkspace;
    this.worktreesFolder = services.worktreesFolder;
    this.snapshots = services.snapshots;
    this.workspaceSkills = services.workspaceSkills;
    this.workspacePrompt = services.workspacePrompt;
  }
}
