import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { z } from "zod";
import type { AgentRuntime } from "../agent";
import type { BridgeConfig } from "../config";
import { errorMessage, isWorldlineError } from "../errors";
import type { EventEnvelope } from "../protocol";
import type { EventLog, Session, Sessions } from "../sessions";
import type { McpServerConfig, SessionMcp } from "../tools";
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
import { askClient, type ApprovalsPort } from "./permissions";
import { ClientTools } from "./client-tools";
import { promptImages, promptText } from "./prompt";
import { driveTurn, errorLine, type TurnSummary, type TurnsPort } from "./turn";
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
  sessionUrl?: (sessionId: string) => string;
  /** MCP servers per session: those a client sends with session/new, load and resume join the workspace's. */
  mcp?: SessionMcp;
}

interface OpenSession {
  id: string;
  workspace: string;
  mode: ModeId;
  translator: UpdateTranslator;
  pickedModels: Set<string>;
  /** The client's fs/terminal in place of the local tools, when it offers them. */
  clientTools?: ClientTools;
}

const SetModelParams = z.object({ sessionId: z.string(), modelId: z.string().min(1) }).passthrough();

/** Sessions listed per page of session/list. */
const LIST_PAGE_SIZE = 100;

/**
 * `worldline acp`: an ACP v1 agent whose sessions are ordinary Worldline
 * sessions. One instance serves one client connection.
 */
export function createAcpAgent(bridge: () => Promise<AcpServices>): acp.AgentApp {
  let services!: AcpServices;
  const ready = async () => {
    services = await bridge();
  };
  const open = new Map<string, OpenSession>();
  let clientCapabilities: acp.ClientCapabilities = {};

  const currentModel = (session: Session) => session.model ?? services.config.model?.model;

  const sessionState = async (session: Session, state: OpenSession) => {
    const model = currentModel(session);
    const choices = modelChoices(services.config.model?.model, model, state.pickedModels);
    return {
      modes: modeState(state.mode),
      configOptions: configOptions(model, choices),
      models: legacyModels(model, choices),
    };
  };

  /** Routes the session's file and shell tools through this client when it advertised fs or terminal. */
  const useClient = (state: OpenSession, client: acp.AgentContext) => {
    const tools = new ClientTools({ client, sessionId: state.id, capabilities: clientCapabilities });
    state.clientTools = tools.active ? tools : undefined;
    services.runtime.setSessionTools(
      state.id,
      "acp-client",
      state.clientTools && { tools: ({ tools: current }) => tools.tools(current) },
    );
  };

  const connectMcp = (sessionId: string, servers: acp.McpServer[] | undefined) => {
    services.mcp?.setClientServers(sessionId, mcpConfigs(servers ?? []));
  };

  const attach = (session: Session): OpenSession => {
    const existing = open.get(session.id);
    if (existing) return existing;
    const state: OpenSession = {
      id: session.id,
      workspace: session.workspace.path,
      mode: modeOf(session),
      translator: new UpdateTranslator(session.workspace.path),
      pickedModels: new Set(),
    };
    open.set(session.id, state);
    return state;
  };

  const requireOpen = async (sessionId: string): Promise<{ session: Session; state: OpenSession }> => {
    const session = await findSession(services.sessions, sessionId);
    if (!session) throw acp.RequestError.sessionNotFound(sessionId);
    const state = attach(session);
    // The web UI or the HTTP API may have switched plan mode or yolo since.
    state.mode = modeOf(session);
    return { session, state };
  };

  const setModel = async (sessionId: string, model: string) => {
    const { state } = await requireOpen(sessionId);
    state.pickedModels.add(model);
    return services.sessions.update(sessionId, { model });
  };

  const setMode = async (sessionId: string, modeId: string) => {
    if (!isModeId(modeId))
      throw acp.RequestError.invalidParams({ modeId }, `Unknown mode "${modeId}"; use default, plan or yolo.`);
    const { session, state } = await requireOpen(sessionId);
    state.mode = modeId;
    // Plan mode keeps the session's yolo flag (it decides again once the plan is approved); the other two set it.
    const patch = modeId === "plan" ? { mode: "plan" as const } : { mode: "default" as const, yolo: modeId === "yolo" };
    if (session.mode !== patch.mode || (patch.yolo !== undefined && session.yolo !== patch.yolo))
      await services.sessions.update(sessionId, patch);
  };

  const announceCommands = (client: acp.AgentContext, sessionId: string) => {
    // After the response has gone out: clients attach update routing once they know the id.
    setTimeout(() => {
      void client
        .notify(acp.methods.client.session.update, {
          sessionId,
          update: { sessionUpdate: "available_commands_update", availableCommands: AVAILABLE_COMMANDS },
        })
        .catch(() => undefined); // the client went away; nothing to tell
    }, 0);
  };

  return acp
    .agent({ name: "worldline" })
    .onRequest(acp.methods.agent.initialize, async ({ params }) => {
      await ready();
      clientCapabilities = params.clientCapabilities ?? {};
      return {
        protocolVersion: acp.PROTOCOL_VERSION,
        agentInfo: { name: "worldline", title: "Worldline", version: services.version },
        authMethods: [],
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { embeddedContext: true, image: true, audio: false },
          mcpCapabilities: { http: true, sse: false },
          sessionCapabilities: { list: {}, resume: {}, close: {} },
        },
      };
    })
    .onRequest(acp.methods.agent.session.new, async ({ params, client }) => {
      await ready();
      const session = await createSession(services.sessions, params.cwd);
      const state = attach(session);
      connectMcp(session.id, params.mcpServers);
      useClient(state, client);
      if (services.sessionUrl)
        console.error(`[worldline acp] session ${session.id}: ${services.sessionUrl(session.id)}`);
      announceCommands(client, session.id);
      return { sessionId: session.id, ...(await sessionState(session, state)) };
    })
    .onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
      await ready();
      const { session, state } = await requireOpen(params.sessionId);
      connectMcp(session.id, params.mcpServers);
      useClient(state, client);
      // A fresh translator: replayed tool calls must not mix with a live one of another client.
      state.translator = new UpdateTranslator(session.workspace.path);
      for (const event of await services.log.read(session.id, 0)) {
        for (const update of state.translator.translate(event, { replay: true })) {
          await client.notify(acp.methods.client.session.update, { sessionId: session.id, update });
        }
      }
      announceCommands(client, session.id);
      return sessionState(session, state);
    })
    .onRequest(acp.methods.agent.session.resume, async ({ params, client }) => {
      await ready();
      // Unknown ids answer "not found" (-32002): a client can then fall back to session/new.
      const { session, state } = await requireOpen(params.sessionId);
      connectMcp(session.id, params.mcpServers);
      useClient(state, client);
      announceCommands(client, session.id);
      return sessionState(session, state);
    })
    .onRequest(acp.methods.agent.session.list, async ({ params }) => {
      await ready();
      const cwd = params.cwd ? path.resolve(params.cwd) : undefined;
      const all = (await services.sessions.list()).filter((session) => !cwd || session.workspace.path === cwd);
      const start = params.cursor ? Number.parseInt(params.cursor, 10) || 0 : 0;
      const page = all.slice(start, start + LIST_PAGE_SIZE);
      return {
        sessions: page.map((session) => ({
          sessionId: session.id,
          cwd: session.workspace.path,
          title: session.title,
          updatedAt: session.updatedAt.toISOString(),
        })),
        nextCursor: start + LIST_PAGE_SIZE < all.length ? String(start + LIST_PAGE_SIZE) : null,
      };
    })
    .onRequest(acp.methods.agent.session.close, async ({ params }) => {
      await ready();
      if (!open.has(params.sessionId)) return {};
      await services.turns.cancel(params.sessionId);
      services.runtime.setSessionTools(params.sessionId, "acp-client", undefined);
      await services.mcp?.forgetSession(params.sessionId);
      open.delete(params.sessionId);
      return {};
    })
    .onRequest(acp.methods.agent.session.setMode, async ({ params }) => {
      await ready();
      await setMode(params.sessionId, params.modeId);
      return {};
    })
    .onRequest(acp.methods.agent.session.setConfigOption, async ({ params }) => {
      await ready();
      if (params.configId !== "model" || typeof params.value !== "string") {
        throw acp.RequestError.invalidParams(
          { configId: params.configId },
          `Unknown config option "${params.configId}"; Worldline offers "model".`,
        );
      }
      const session = await setModel(params.sessionId, params.value);
      const state = attach(session);
      return { configOptions: (await sessionState(session, state)).configOptions };
    })
    .onRequest("session/set_model", SetModelParams, async ({ params }) => {
      await ready();
      await setModel(params.sessionId, params.modelId);
      return {};
    })
    .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
      await ready();
      const { session, state } = await requireOpen(params.sessionId);
      const text = promptText(params.prompt);
      if (!text) throw acp.RequestError.invalidParams(undefined, "The prompt is empty.");
      const toggle = /^\/(yolo|plan)$/.exec(text.trim());
      if (toggle) {
        const modeId = toggle[1] as ModeId;
        await setMode(session.id, state.mode === modeId ? "default" : modeId);
        await client.notify(acp.methods.client.session.update, {
          sessionId: session.id,
          update: { sessionUpdate: "current_mode_update", currentModeId: state.mode },
        });
        return { stopReason: "end_turn" };
      }
      const summary = await runPrompt(services, client, state, text, promptImages(params.prompt));
      return promptResponse(summary);
    })
    .onNotification(acp.methods.agent.session.cancel, async ({ params }) => {
      await ready();
      await services.turns.cancel(params.sessionId);
    });
}

async function runPrompt(
  services: AcpServices,
  client: acp.AgentContext,
  state: OpenSession,
  text: string,
  images: string[],
): Promise<TurnSummary> {
  const permissions = new Set<Promise<void>>();
  const waiting = new Map<string, AbortController>();
  const notify = (update: acp.SessionUpdate) =>
    client.notify(acp.methods.client.session.update, { sessionId: state.id, update });

  const onEvent = async (event: EventEnvelope) => {
    if (event.type === "approval.requested" && services.approvals) {
      const decided = new AbortController();
      waiting.set(event.payload.approvalId, decided);
      // Not awaited in the event chain: parallel calls may each wait for an answer.
      const asking = askClient({
        client,
        sessionId: state.id,
        workspace: state.workspace,
        request: event.payload,
        approvals: services.approvals,
        decidedElsewhere: decided.signal,
      });
      permissions.add(asking);
      void asking.finally(() => permissions.delete(asking));
    }
    if (event.type === "session.updated" && (event.payload.mode !== undefined || event.payload.yolo !== undefined)) {
      // Plan approved in the web UI (or yolo switched there) while the client's prompt runs.
      const session = await services.sessions.get(state.id);
      const mode = modeOf(session);
      if (mode !== state.mode) {
        state.mode = mode;
        await notify({ sessionUpdate: "current_mode_update", currentModeId: mode });
      }
    }
    if (event.type === "approval.decided") {
      waiting.get(event.payload.approvalId)?.abort();
      waiting.delete(event.payload.approvalId);
    }
    for (const update of state.translator.translate(event)) await notify(update);
  };

  let summary: TurnSummary;
  try {
    summary = await driveTurn(services, state.id, text, onEvent, images.length ? { images } : {});
  } catch (error) {
    if (isWorldlineError(error) && error.code === "session:busy")
      throw acp.RequestError.invalidRequest(undefined, error.message);
    throw error;
  } finally {
    // Every update that embeds a terminal has reached the client: its terminals can go.
    await state.clientTools?.releaseTerminals();
  }
  for (const controller of waiting.values()) controller.abort();
  await Promise.allSettled([...permissions]);
  if (summary.outcome === "error") {
    const failure = summary.error ?? { code: "agent:internal", message: summary.message ?? "The turn failed." };
    process.stderr.write(`${errorLine(failure)}\n`);
  }
  return summary;
}

function promptResponse(summary: TurnSummary): acp.PromptResponse {
  if (summary.outcome === "error") {
    const failure = summary.error ?? { code: "agent:internal", message: summary.message ?? "The turn failed." };
    throw acp.RequestError.internalError({ code: failure.code }, failure.message);
  }
  const stopReason: acp.StopReason =
    summary.outcome === "cancelled" || summary.outcome === "interrupted"
      ? "cancelled"
      : summary.outcome === "max_steps"
        ? "max_turn_requests"
        : summary.stopReason === "truncated"
          ? "max_tokens"
          : summary.stopReason === "refused" || summary.stopReason === "content_filter"
            ? "refusal"
            : "end_turn";
  // `usage` is the field of ACP's (still unstable) usage proposal; `_meta.usage` for clients that read only stable fields.
  return { stopReason, usage: summary.usage, _meta: { usage: summary.usage } } as acp.PromptResponse;
}

async function createSession(sessions: Sessions, cwd: string): Promise<Session> {
  try {
    return await sessions.create({ workspace: path.resolve(cwd || "."), title: "ACP session" });
  } catch (error) {
    throw acp.RequestError.invalidParams({ cwd }, errorMessage(error));
  }
}

async function findSession(sessions: Sessions, id: string): Promise<Session | undefined> {
  try {
    return await sessions.get(id);
  } catch (error) {
    if (isWorldlineError(error) && error.code === "session:not_found") return undefined;
    throw error;
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
