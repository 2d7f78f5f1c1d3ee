import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { errorMessage } from "../../errors";
import type { WorkspaceHost } from "../../host";
import { buildTool, decodeObjectArguments, type Tool } from "../define";
import type { ToolResult } from "../types";
import type { McpServerConfig } from "./config";
import { HostStdioTransport } from "./host-transport";

/** Time for a server to start and list its tools. */
export const MCP_START_TIMEOUT_MS = 30_000;
/** Time for one tool call; MCP servers wrap slow APIs. */
export const MCP_CALL_TIMEOUT_MS = 120_000;
/** stderr kept from a stdio server, for the error shown when it fails. */
const STDERR_TAIL_CHARS = 2_000;
/** OpenAI limits function names to 64 characters of [a-zA-Z0-9_-]. */
const MAX_TOOL_NAME = 64;

export type McpServerState = "starting" | "ready" | "failed" | "closed";

export interface McpServerStatus {
  name: string;
  transport: "stdio" | "http";
  state: McpServerState;
  /** Why it failed or closed, with the end of its stderr for stdio servers. */
  error?: string;
  toolCount: number;
}

export interface McpManagerOptions {
  servers: Record<string, McpServerConfig>;
  /** Folder stdio servers start in (the workspace). */
  cwd?: string;
  /** The session's host: stdio servers start on its machine (this one, or a runner's), through its kill path. */
  host: Pick<WorkspaceHost, "spawnStdio">;
  startTimeoutMs?: number;
  callTimeoutMs?: number;
  onStatus?: (status: McpServerStatus[]) => void;
}

export interface McpManager {
  /** Starts every server; never rejects: failures show up in status(). */
  start(): Promise<void>;
  /** Tools of the servers that are ready, named `<server>__<tool>`. */
  tools(): Tool[];
  status(): McpServerStatus[];
  close(): Promise<void>;
}

interface Connection {
  status: McpServerStatus;
  client?: Client;
  tools: Tool[];
  stderr: string;
}

export function createMcpManager(options: McpManagerOptions): McpManager {
  const startTimeoutMs = options.startTimeoutMs ?? MCP_START_TIMEOUT_MS;
  const callTimeoutMs = options.callTimeoutMs ?? MCP_CALL_TIMEOUT_MS;
  const connections = new Map<string, Connection>();
  const notify = () => options.onStatus?.(statusList());
  const statusList = () => [...connections.values()].map((c) => ({ ...c.status }));

  const fail = (connection: Connection, state: "failed" | "closed", error: string) => {
    const stderr = connection.stderr.trim();
    connection.status = {
      ...connection.status,
      state,
      error: stderr ? `${error}\n${stderr.slice(-STDERR_TAIL_CHARS)}` : error,
    };
    connection.tools = [];
    notify();
  };

  async function startOne(name: string, config: McpServerConfig): Promise<void> {
    const connection: Connection = {
      status: { name, transport: "url" in config ? "http" : "stdio", state: "starting", toolCount: 0 },
      tools: [],
      stderr: "",
    };
    connections.set(name, connection);
    notify();
    let transport: Transport;
    let sdk: McpSdk;
    try {
      sdk = await loadSdk();
      transport = createTransport(sdk, config, options, (chunk) => {
        connection.stderr = (connection.stderr + chunk).slice(-STDERR_TAIL_CHARS);
      });
    } catch (error) {
      return fail(connection, "failed", errorMessage(error));
    }
    const client = new sdk.Client({ name: "worldline", version: "0.1.0" });
    connection.client = client;
    client.onclose = () => {
      if (connection.status.state === "ready") fail(connection, "closed", "The server stopped.");
    };
    try {
      await withTimeout(
        client.connect(transport, { timeout: startTimeoutMs }),
        startTimeoutMs,
        `did not start within ${startTimeoutMs / 1000}s`,
      );
      const listed = await client.listTools(undefined, { timeout: startTimeoutMs });
      connection.tools = listed.tools.map((tool) => wrapTool(name, tool, connection, callTimeoutMs));
      connection.status = { ...connection.status, state: "ready", toolCount: connection.tools.length };
      notify();
    } catch (error) {
      fail(connection, "failed", `Could not start MCP server "${name}": ${errorMessage(error)}`);
      await client.close().catch(() => undefined); // the start failure above is what is reported
    }
  }

  return {
    async start() {
      await Promise.all(
        Object.entries(options.servers).map(([name, config]) =>
          startOne(name, config).catch((error) => {
            // startOne handles its own failures; this is a last guard so one server never breaks the session.
            const connection = connections.get(name);
            if (connection) fail(connection, "failed", errorMessage(error));
          }),
        ),
      );
    },
    tools: () => [...connections.values()].filter((c) => c.status.state === "ready").flatMap((c) => c.tools),
    status: statusList,
    async close() {
      await Promise.all(
        [...connections.values()].map(async (connection) => {
          if (connection.status.state === "ready" || connection.status.state === "starting")
            connection.status = { ...connection.status, state: "closed" };
          await connection.client?.close().catch(() => undefined); // closing: a dead server has nothing to close
        }),
      );
    },
  };
}

/**
 * The MCP SDK (~0.2 s of module loading) is imported when a session first starts a server, not
 * at bridge start-up: most sessions have no MCP server, and `worldline acp`/`run` answer sooner.
 */
async function loadSdk() {
  const [{ Client }, { StreamableHTTPClientTransport }, { ReadBuffer, serializeMessage }] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/shared/stdio.js"),
  ]);
  return {
    Client,
    StreamableHTTPClientTransport,
    framing: { ReadBuffer, serializeMessage },
  };
}

type McpSdk = Awaited<ReturnType<typeof loadSdk>>;

function createTransport(
  { StreamableHTTPClientTransport, framing }: McpSdk,
  config: McpServerConfig,
  { cwd, host }: Pick<McpManagerOptions, "cwd" | "host">,
  onStderr: (chunk: string) => void,
): Transport {
  if ("url" in config)
    return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
  const spec = {
    command: config.command,
    args: config.args ?? [],
    cwd: config.cwd ?? cwd ?? process.cwd(),
    env: config.env ?? {},
  };
  return new HostStdioTransport(host, spec, framing, onStderr);
}

interface ListedTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

function wrapTool(server: string, tool: ListedTool, connection: Connection, callTimeoutMs: number): Tool {
  const name = mcpToolName(server, tool.name);
  return buildTool<Record<string, unknown>>({
    name,
    description: `${tool.description ?? tool.name} (MCP server "${server}")`,
    jsonSchema: { type: "object", ...tool.inputSchema },
    parse: decodeObjectArguments,
    // MCP servers can do anything; every call goes through the approval gate.
    needsApproval: () => ({
      level: "ask",
      subject: name,
      scope: name,
      description: `Call ${tool.name} on MCP server "${server}"`,
      risk: "medium",
      actionType: "mcp",
    }),
    timeoutMs: callTimeoutMs + 5_000,
    async execute(args, ctx): Promise<ToolResult> {
      if (connection.status.state !== "ready" || !connection.client) {
        return {
          isError: true,
          output: `MCP server "${server}" is not running (${connection.status.error ?? connection.status.state}).`,
        };
      }
      const result = await connection.client.callTool({ name: tool.name, arguments: args }, undefined, {
        signal: ctx.signal,
        timeout: callTimeoutMs,
      });
      return { isError: result.isError === true, output: renderContent(result) };
    },
  });
}

/** `<server>__<tool>`, restricted to what model APIs accept. */
export function mcpToolName(server: string, tool: string): string {
  const clean = (s: string) => s.replace(/[^a-zA-Z0-9_-]/g, "_");
  return `${clean(server)}__${clean(tool)}`.slice(0, MAX_TOOL_NAME);
}

function renderContent(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content) ? (result.content as Array<Record<string, unknown>>) : [];
  const parts = content.map((part) => {
    if (part.type === "text" && typeof part.text === "string") return part.text;
    if (part.type === "image" || part.type === "audio") return `[${part.type}: ${String(part.mimeType ?? "binary")}]`;
    if (part.type === "resource" && typeof part.resource === "object" && part.resource) {
      const resource = part.resource as Record<string, unknown>;
      return typeof resource.text === "string" ? resource.text : `[resource ${String(resource.uri ?? "")}]`;
    }
    if (part.type === "resource_link") return `[resource ${String(part.uri ?? "")}]`;
    return JSON.stringify(part);
  });
  if (parts.length === 0 && result.structuredContent !== undefined)
    return JSON.stringify(result.structuredContent, null, 2);
  if (parts.length === 0 && "toolResult" in result) return JSON.stringify(result.toolResult);
  return parts.join("\n") || "(no output)";
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
