import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import type { AgentRuntime } from "../agent";
import type { BridgeConfig } from "../config";
import { errorMessage, isWorldlineError } from "../errors";
import type { EventLog, Session, Sessions } from "../sessions";
import type { McpServerConfig, SessionMcp } from "../tools";
import { ClientTools } from "./client-tools";
import {
  AVAILABLE_COMMANDS,
  configOptions,
  isModeId,
  legacyModels,
  modeState,
  modelChoices,
  modeOf,
  type ModeId,
} from "./options";
import type { ApprovalsPort } from "./permissions";
import type { TurnsPort } from "./turn";
import { UpdateTranslator } from "./updates";

/** What the ACP agent needs of the bridge it runs in. */
export interface AcpServices {
  config: BridgeConfig;
  version: string;
  sessions: Sessions;
  /** Session tools only: prompts and cancels go through `turns`. */
  runtime: AgentRuntime;
  /** The one way to turns, right in team mode (server/team TurnRouter). */
  turns: TurnsPort;
  log: EventLog;
  /** The durable approval queue; without it, approvals are decided by the bridge's gate alone. */
  approvals?: ApprovalsPort;
  /** Where each session shows in the browser, for logs. */
  sessionUrl?: (sessionId: string) => string | undefined;
  /** MCP servers per session: those a client sends with session/new, load and resume join the workspace's. */
  mcp?: SessionMcp;
}

/** A session this connection has opened (new, load or resume), with what the connection keeps of it. */
export interface OpenSession {
  id: string;
  workspace: string;
  mode: ModeId;
  translator: UpdateTranslator;
  pickedModels: Set<string>;
  /** The client's fs/terminal in place of the local tools, when it offers them. */
  clientTools?: ClientTools;
}

/** The sessions one ACP connection has open, and what it knows of its client. */
export class AcpSessions {
  private readonly open = new Map<string, OpenSession>();
  clientCapabilities: acp.ClientCapabilities = {};

  constructor(readonly services: AcpServices) {}

  async create(cwd: string): Promise<Session> {
    try {
      return await this.services.sessions.create({ workspace: path.resolve(cwd || "."), title: "ACP session" });
    } catch (error) {
      throw acp.RequestError.invalidParams({ cwd }, errorMessage(error));
    }
  }

  attach(session: Session): OpenSession {
    const existing = this.open.get(session.id);
    if (existing) return existing;
    const state: OpenSession = {
      id: session.id,
      workspace: session.workspace.path,
      mode: modeOf(session),
      translator: new UpdateTranslator(session.workspace.path),
      pickedModels: new Set(),
    };
    this.open.set(session.id, state);
    return state;
  }

  /** The session (unknown ids answer ACP's "not found"), opened on this connection. */
  async require(sessionId: string): Promise<{ session: Session; state: OpenSession }> {
    const session = await this.find(sessionId);
    if (!session) throw acp.RequestError.sessionNotFound(sessionId);
    const state = this.attach(session);
    // The web UI or the HTTP API may have switched plan mode or yolo since.
    state.mode = modeOf(session);
    return { session, state };
  }

  /** The client's MCP servers and, when it advertised fs or terminal, its file and shell tools for the session. */
  connect(state: OpenSession, client: acp.AgentContext, servers: acp.McpServer[] | undefined): void {
    this.services.mcp?.setClientServers(state.id, mcpConfigs(servers ?? []));
    const tools = new ClientTools({ client, sessionId: state.id, capabilities: this.clientCapabilities });
    state.clientTools = tools.active ? tools : undefined;
    this.services.runtime.setSessionTools(
      state.id,
      "acp-client",
      state.clientTools && { tools: ({ tools: current }) => tools.tools(current) },
    );
  }

  /** The slash commands, told once the response has gone out: clients route updates once they know the id. */
  announceCommands(client: acp.AgentContext, sessionId: string): void {
    setTimeout(() => {
      void client
        .notify(acp.methods.client.session.update, {
          sessionId,
          update: { sessionUpdate: "available_commands_update", availableCommands: AVAILABLE_COMMANDS },
        })
        .catch(() => undefined); // the client went away; nothing to tell
    }, 0);
  }

  /** Modes, config options and models, as session/new, load and resume answer them. */
  async stateOf(session: Session, state: OpenSession) {
    const model = session.model ?? this.services.config.model?.model;
    const choices = modelChoices(this.services.config.model?.model, model, state.pickedModels);
    return {
      modes: modeState(state.mode),
      configOptions: configOptions(model, choices),
      models: legacyModels(model, choices),
    };
  }

  async setModel(sessionId: string, model: string): Promise<Session> {
    const { state } = await this.require(sessionId);
    state.pickedModels.add(model);
    return this.services.sessions.update(sessionId, { model });
  }

  async setMode(sessionId: string, modeId: string): Promise<void> {
    if (!isModeId(modeId))
      throw acp.RequestError.invalidParams({ modeId }, `Unknown mode "${modeId}"; use default, plan or yolo.`);
    const { session, state } = await this.require(sessionId);
    state.mode = modeId;
    // Plan mode keeps the session's yolo flag (it decides again once the plan is approved); the other two set it.
    const patch = modeId === "plan" ? { mode: "plan" as const } : { mode: "default" as const, yolo: modeId === "yolo" };
    if (session.mode !== patch.mode || (patch.yolo !== undefined && session.yolo !== patch.yolo))
      await this.services.sessions.update(sessionId, patch);
  }

  /** Cancels the session's turn and drops what this connection gave it; false when it was not open here. */
  async close(sessionId: string): Promise<boolean> {
    if (!this.open.has(sessionId)) return false;
    await this.services.turns.cancel(sessionId);
    this.services.runtime.setSessionTools(sessionId, "acp-client", undefined);
    await this.services.mcp?.forgetSession(sessionId);
    this.open.delete(sessionId);
    return true;
  }

  private async find(id: string): Promise<Session | undefined> {
    try {
      return await this.services.sessions.get(id);
    } catch (error) {
      if (isWorldlineError(error) && error.code === "session:not_found") return undefined;
      throw error;
    }
  }
}

/** ACP's MCP server entries as Worldline's MCP config; SSE (not advertised) is skipped with a line on stderr. */
export function mcpConfigs(servers: acp.McpServer[]): Record<string, McpServerConfig> {
  const configs: Record<string, McpServerConfig> = {};
  const pairs = (list: { name: string; value: string }[] | undefined) =>
    Object.fromEntries((list ?? []).map(({ name, value }) => [name, value]));
  for (const server of servers) {
    if ("type" in server && server.type === "http")
      configs[server.name] = { url: server.url, headers: pairs(server.headers) };
    else if ("type" in server && server.type === "sse")
      process.stderr.write(
        `[worldline acp] MCP server "${server.name}" uses SSE, which Worldline does not support; use http.\n`,
      );
    else if ("command" in server)
      configs[server.name] = { command: server.command, args: server.args ?? [], env: pairs(server.env) };
  }
  return configs;
}
