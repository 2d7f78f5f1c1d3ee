import { statSync } from "node:fs";
import path from "node:path";
import { errorMessage } from "../../errors";
import { localHost, type WorkspaceHost } from "../../host";
import type { Tool } from "../define";
import { loadMcpConfig, type LoadedMcpConfig, type McpServerConfig } from "./config";
import { createMcpManager, type McpManager, type McpServerStatus } from "./manager";

/** Where a session's MCP server was configured. */
export type McpServerSource = "workspace" | "client";

/** A server as GET /api/v1/sessions/:id/mcp lists it; `idle` until the session's first turn starts it. */
export interface SessionMcpServer extends Omit<McpServerStatus, "state"> {
  state: McpServerStatus["state"] | "idle";
  source: McpServerSource;
}

export interface SessionMcpStatus {
  servers: SessionMcpServer[];
  /** Problems with the config files (broken JSON, bad entries); the other servers still run. */
  errors: string[];
}

export interface SessionMcpOptions {
  /** WORLDLINE_HOME: its mcp.json configures servers for every workspace. */
  home: string;
  /** A notice in a session's log (a server failed or stopped), outside of any turn. */
  notice: (sessionId: string, level: "info" | "warning" | "error", text: string) => void;
  startTimeoutMs?: number;
  callTimeoutMs?: number;
}

interface Group {
  source: McpServerSource;
  /** The servers as configured; a change restarts the group. */
  key: string;
  manager: McpManager;
  started: Promise<void>;
  running: boolean;
  errors: string[];
  /** Sessions using these servers, each with the failures it has been told about. */
  sessions: Map<string, Set<string>>;
}

/** The part of the runtime's TurnEmitter this module uses. */
export interface TurnNoticeEmitter {
  turnId: string;
  event(event: {
    type: "notice";
    payload: { level: "info" | "warning" | "error"; text: string; turnId?: string };
  }): void;
}

/** What a turn needs: its MCP tools, and notices for what went wrong meanwhile. */
export interface SessionMcpTurn {
  sessionId: string;
  workspace: string;
  /** A cancelled turn stops waiting for servers to start (they go on starting for the next one). */
  signal?: AbortSignal;
  /** A session on a runner: its servers are configured by the workspace's own file there and start there. */
  host?: WorkspaceHost;
  notice: (level: "info" | "warning" | "error", text: string) => void;
}

/**
 * MCP servers per session: the workspace's (`$WORLDLINE_HOME/mcp.json`, then
 * `<workspace>/.worldline/mcp.json`; one set of processes per workspace, shared
 * by its sessions) plus those an ACP client sent for one session. Servers start
 * on a session's first turn; a config change restarts them at the next turn, as
 * does a crash. Failures become notices in the session and never end a turn.
 *
 * A session on a runner takes only `<workspace>/.worldline/mcp.json`, read on the runner, and
 * its stdio servers (and those of its ACP client) run there, through the host's stdio channel;
 * the hub's own mcp.json names programs and secrets of the hub's machine.
 */
export class SessionMcp {
  private readonly workspaces = new Map<string, Group>();
  private readonly clients = new Map<string, Group>();
  private readonly clientConfigs = new Map<string, Record<string, McpServerConfig>>();
  /** The last config read per workspace, with the stat of its files then (see `config`). */
  private readonly configs = new Map<string, { stamp: string; config: LoadedMcpConfig }>();
  private closed = false;

  constructor(private readonly options: SessionMcpOptions) {}

  /** The config files of a workspace, global first. */
  configPaths(workspace: string): string[] {
    return [path.join(this.options.home, "mcp.json"), path.join(workspace, ".worldline", "mcp.json")];
  }

  /** Servers an ACP client sent with session/new, load or resume; they replace earlier ones at the next turn. */
  setClientServers(sessionId: string, servers: Record<string, McpServerConfig>): void {
    if (Object.keys(servers).length === 0) this.clientConfigs.delete(sessionId);
    else this.clientConfigs.set(sessionId, servers);
  }

  /** A session that ended (ACP session/close, deleted): its client's servers stop, the workspace's keep running for others. */
  async forgetSession(sessionId: string): Promise<void> {
    this.clientConfigs.delete(sessionId);
    for (const group of this.workspaces.values()) group.sessions.delete(sessionId);
    const client = this.clients.get(sessionId);
    this.clients.delete(sessionId);
    if (client) await stop(client);
  }

  /** Starts what the session needs (first turn, changed config, crashed server) and returns the tools of the ready servers. */
  async tools(turn: SessionMcpTurn): Promise<Tool[]> {
    if (this.closed) return [];
    const groups: Group[] = [];
    const host = turn.host?.runner ? turn.host : undefined;
    const workspace = await this.workspaceGroup(turn.workspace, host);
    if (workspace) groups.push(workspace);
    const client = this.clientGroup(turn.sessionId, turn.workspace, host);
    if (client) groups.push(client);
    const tools: Tool[] = [];
    for (const group of groups) {
      if (!group.running) {
        // A slow server (npx fetching a package) should not look like a hung turn.
        const slow = setTimeout(
          () =>
            turn.notice(
              "info",
              `Starting MCP servers: ${group.manager
                .status()
                .map((s) => s.name)
                .join(", ")}…`,
            ),
          SLOW_START_NOTICE_MS,
        );
        try {
          await untilAborted(group.started, turn.signal);
        } finally {
          clearTimeout(slow);
        }
        if (turn.signal?.aborted) return [];
      }
      let told = group.sessions.get(turn.sessionId);
      if (!told) group.sessions.set(turn.sessionId, (told = new Set()));
      for (const line of [...group.errors, ...failures(group)]) {
        if (told.has(line)) continue;
        told.add(line);
        turn.notice("warning", line);
      }
      tools.push(...group.manager.tools());
    }
    return tools;
  }

  /** The per-turn tool source the runtime takes (RuntimeDeps.sessionTools); notices go into the turn. */
  toolSource(): {
    tools(input: {
      sessionId: string;
      workspace: string;
      emit: TurnNoticeEmitter;
      signal?: AbortSignal;
      host?: WorkspaceHost;
    }): Promise<Tool[]>;
  } {
    return {
      tools: ({ sessionId, workspace, emit, signal, host }) =>
        this.tools({
          sessionId,
          workspace,
          signal,
          host,
          notice: (level, text) => emit.event({ type: "notice", payload: { level, text, turnId: emit.turnId } }),
        }),
    };
  }

  /** Every server the session has or will have, with its state. */
  async status(sessionId: string, workspace: string): Promise<SessionMcpStatus> {
    const result: SessionMcpStatus = { servers: [], errors: [] };
    const group = this.workspaces.get(workspace);
    if (group) {
      result.servers.push(...group.manager.status().map((status) => ({ ...status, source: group.source })));
      result.errors.push(...group.errors);
    } else {
      const config = await this.config(workspace);
      result.servers.push(...idle(config.servers, "workspace"));
      result.errors.push(...config.errors);
    }
    const client = this.clients.get(sessionId);
    const clientConfig = this.clientConfigs.get(sessionId);
    if (client && client.key === configKey(clientConfig ?? {}))
      result.servers.push(...client.manager.status().map((status) => ({ ...status, source: client.source })));
    else if (clientConfig) result.servers.push(...idle(clientConfig, "client"));
    return result;
  }

  /** Stops every server (bridge shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    const groups = [...this.workspaces.values(), ...this.clients.values()];
    this.workspaces.clear();
    this.clients.clear();
    await Promise.all(groups.map((group) => stop(group)));
  }

  /**
   * The workspace's MCP config, read again only when one of its files changed (size, mtime,
   * ctime, inode) or appeared or went. Every turn asks: two async reads of usually missing
   * files cost ~3.6 ms of the time to first token on a busy event loop; two stats do not.
   */
  private async config(workspace: string): Promise<LoadedMcpConfig> {
    const paths = this.configPaths(workspace);
    const stamp = paths.map(fileStamp).join("|");
    const cached = this.configs.get(workspace);
    if (cached?.stamp === stamp) return cached.config;
    const none = stamp === paths.map(() => "-").join("|");
    const config = none ? { servers: {}, errors: [] } : await loadMcpConfig(paths);
    // A file that cannot be stat'ed (or just changed) is read again next time.
    if (!stamp.includes("?")) this.configs.set(workspace, { stamp, config });
    return config;
  }

  private async workspaceGroup(workspace: string, host: WorkspaceHost | undefined): Promise<Group | undefined> {
    // Read on the runner at every turn (one request); a runner's workspace is named by runner and path.
    const config = host
      ? await loadMcpConfig([path.join(workspace, ".worldline", "mcp.json")], (file) => host.readText(file))
      : await this.config(workspace);
    const place = host ? `${host.runner}:${workspace}` : workspace;
    const key = configKey(config.servers) + JSON.stringify(config.errors);
    const existing = this.workspaces.get(place);
    if (existing && existing.key === key && !crashed(existing)) return existing;
    if (existing) {
      this.workspaces.delete(place);
      void stop(existing);
    }
    if (Object.keys(config.servers).length === 0 && config.errors.length === 0) return undefined;
    const group = this.startGroup("workspace", config.servers, key, config.errors, workspace, host);
    // Sessions already told about the old servers' failures hear about the new ones.
    if (existing) for (const sessionId of existing.sessions.keys()) group.sessions.set(sessionId, new Set());
    this.workspaces.set(place, group);
    return group;
  }

  private clientGroup(sessionId: string, workspace: string, host: WorkspaceHost | undefined): Group | undefined {
    const servers = this.clientConfigs.get(sessionId) ?? {};
    const key = configKey(servers);
    const existing = this.clients.get(sessionId);
    if (existing && existing.key === key && !crashed(existing)) return existing;
    if (existing) {
      this.clients.delete(sessionId);
      void stop(existing);
    }
    if (Object.keys(servers).length === 0) return undefined;
    // A client's stdio servers start in the session's workspace, like the workspace's own.
    const group = this.startGroup("client", servers, key, [], workspace, host);
    group.sessions.set(sessionId, new Set());
    this.clients.set(sessionId, group);
    return group;
  }

  private startGroup(
    source: McpServerSource,
    servers: Record<string, McpServerConfig>,
    key: string,
    errors: string[],
    cwd: string | undefined,
    host?: WorkspaceHost,
  ): Group {
    const group: Group = {
      source,
      key,
      errors: errors.map((error) => `MCP config: ${error}`),
      running: false,
      sessions: new Map(),
      started: Promise.resolve(),
      manager: undefined!,
    };
    const seen = new Map<string, string>();
    group.manager = createMcpManager({
      servers,
      cwd,
      // This machine's stdio servers start through its host too: the one spawn and kill path.
      host: host ?? localHost,
      startTimeoutMs: this.options.startTimeoutMs,
      callTimeoutMs: this.options.callTimeoutMs,
      onStatus: (statuses) => {
        for (const status of statuses) {
          const before = seen.get(status.name);
          seen.set(status.name, status.state);
          // Failures while starting are told by the turn that waits for them; later ones (a crash) right away.
          if (!group.running || before !== "ready" || (status.state !== "failed" && status.state !== "closed"))
            continue;
          const line = describeFailure(status);
          for (const [sessionId, told] of group.sessions) {
            if (told.has(line)) continue;
            told.add(line);
            this.options.notice(sessionId, "warning", line);
          }
        }
      },
    });
    group.started = group.manager
      .start()
      .catch((error: unknown) => {
        group.errors.push(`MCP servers could not start: ${errorMessage(error)}`);
      })
      .then(() => {
        group.running = true;
      });
    return group;
  }
}

/**
 * A file's identity and version for the config cache: "-" when missing, "?" when it cannot be
 * stat'ed or changed too recently to tell a next change apart (file times tick coarsely, so two
 * writes of the same size a few ms apart can share a stamp: the racy-git problem).
 */
function fileStamp(file: string): string {
  try {
    const stat = statSync(file, { bigint: true });
    if (Date.now() - Number(stat.ctimeMs) < RACY_MS || Date.now() - Number(stat.mtimeMs) < RACY_MS) return "?";
    return `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? "-" : "?";
  }
}

/** A config file changed less than this long ago is read again at the next turn (see fileStamp). */
const RACY_MS = 100;

/** After this, a turn waiting for its servers says so. */
const SLOW_START_NOTICE_MS = 2_000;

function untilAborted(promise: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      signal.removeEventListener("abort", done);
      resolve();
    };
    signal.addEventListener("abort", done, { once: true });
    void promise.then(done, done);
  });
}

/** The servers in a stable order, to tell a changed config from the running one. */
function configKey(servers: Record<string, McpServerConfig>): string {
  return JSON.stringify(Object.entries(servers).sort(([a], [b]) => a.localeCompare(b)));
}

function idle(servers: Record<string, McpServerConfig>, source: McpServerSource): SessionMcpServer[] {
  return Object.entries(servers).map(([name, config]) => ({
    name,
    transport: "url" in config ? "http" : "stdio",
    state: "idle",
    toolCount: 0,
    source,
  }));
}

function failures(group: Group): string[] {
  return group.manager
    .status()
    .filter((status) => status.state === "failed" || status.state === "closed")
    .map(describeFailure);
}

/** A server that was ready and stopped on its own is started again at the next turn. */
function crashed(group: Group): boolean {
  return group.running && group.manager.status().some((status) => status.state === "closed");
}

function describeFailure(status: McpServerStatus): string {
  const what = status.state === "failed" ? "failed to start" : "stopped";
  return `MCP server "${status.name}" ${what}; its tools are unavailable.${status.error ? ` ${status.error}` : ""}`;
}

/** Closes at once, also servers still starting (their start then fails quietly). */
async function stop(group: Group): Promise<void> {
  await group.manager.close().catch(() => undefined); // stopping: a server that already died has nothing to close
}
