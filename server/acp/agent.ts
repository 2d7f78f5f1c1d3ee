import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import * as z from "zod";
import { isWorldlineError } from "../errors";
import type { EventEnvelope } from "../protocol";
import { modeOf, type ModeId } from "./options";
import { PromptPermissions } from "./permissions";
import { promptImages, promptText } from "./prompt";
import { AcpSessions, type AcpServices, type OpenSession } from "./sessions";
import { acpStopReason, driveTurn, errorLine, type TurnSummary } from "./turn";
import { UpdateTranslator } from "./updates";

const SetModelParams = z.object({ sessionId: z.string(), modelId: z.string().min(1) }).passthrough();

/** Sessions listed per page of session/list. */
const LIST_PAGE_SIZE = 100;

/** The connection's sessions, once the bridge is up (every request but `initialize`'s answer waits for it). */
type Ready = () => Promise<AcpSessions>;

/**
 * `worldline acp`: an ACP v1 agent whose sessions are ordinary Worldline
 * sessions. One instance serves one client connection.
 */
/** What the process running the agent hears of it: `promptEnded` after each session/prompt's answer. */
export interface AcpAgentHooks {
  promptEnded?: () => void;
}

export function createAcpAgent(bridge: () => Promise<AcpServices>, hooks: AcpAgentHooks = {}): acp.AgentApp {
  let sessions: Promise<AcpSessions> | undefined;
  const ready: Ready = () => (sessions ??= bridge().then((services) => new AcpSessions(services)));
  const app = acp.agent({ name: "worldline" }).onRequest(acp.methods.agent.initialize, async ({ params }) => {
    const open = await ready();
    open.clientCapabilities = params.clientCapabilities ?? {};
    return {
      protocolVersion: acp.PROTOCOL_VERSION,
      agentInfo: { name: "worldline", title: "Worldline", version: open.services.version },
      authMethods: [],
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { embeddedContext: true, image: true, audio: false },
        mcpCapabilities: { http: true, sse: false },
        sessionCapabilities: { list: {}, resume: {}, close: {} },
      },
    };
  });
  onSessionLifecycle(app, ready);
  onSessionSettings(app, ready);
  onPrompts(app, ready, hooks);
  return app;
}

/** session/new, load, resume, list and close. */
function onSessionLifecycle(app: acp.AgentApp, ready: Ready): void {
  app
    .onRequest(acp.methods.agent.session.new, async ({ params, client }) => {
      const open = await ready();
      const session = await open.create(params.cwd);
      const state = open.attach(session);
      open.connect(state, client, params.mcpServers);
      const url = open.services.sessionUrl?.(session.id);
      if (url) console.error(`[worldline acp] session ${session.id}: ${url}`);
      open.announceCommands(client, session.id);
      return { sessionId: session.id, ...(await open.stateOf(session, state)) };
    })
    .onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
      const open = await ready();
      const { session, state } = await open.require(params.sessionId);
      open.connect(state, client, params.mcpServers);
      // A fresh translator: replayed tool calls must not mix with a live one of another client.
      state.translator = new UpdateTranslator(session.workspace.path);
      for (const event of await open.services.log.read(session.id, 0)) {
        for (const update of state.translator.translate(event, { replay: true })) {
          await client.notify(acp.methods.client.session.update, { sessionId: session.id, update });
        }
      }
      open.announceCommands(client, session.id);
      return open.stateOf(session, state);
    })
    .onRequest(acp.methods.agent.session.resume, async ({ params, client }) => {
      const open = await ready();
      // Unknown ids answer "not found" (-32002): a client can then fall back to session/new.
      const { session, state } = await open.require(params.sessionId);
      open.connect(state, client, params.mcpServers);
      open.announceCommands(client, session.id);
      return open.stateOf(session, state);
    })
    .onRequest(acp.methods.agent.session.list, async ({ params }) => {
      const open = await ready();
      const cwd = params.cwd ? path.resolve(params.cwd) : undefined;
      const all = (await open.services.sessions.list()).filter((session) => !cwd || session.workspace.path === cwd);
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
      await (await ready()).close(params.sessionId);
      return {};
    });
}

/** Mode and model: session/set_mode, set_config_option and the older set_model. */
function onSessionSettings(app: acp.AgentApp, ready: Ready): void {
  app
    .onRequest(acp.methods.agent.session.setMode, async ({ params }) => {
      await (await ready()).setMode(params.sessionId, params.modeId);
      return {};
    })
    .onRequest(acp.methods.agent.session.setConfigOption, async ({ params }) => {
      const open = await ready();
      if (params.configId !== "model" || typeof params.value !== "string") {
        throw acp.RequestError.invalidParams(
          { configId: params.configId },
          `Unknown config option "${params.configId}"; Worldline offers "model".`,
        );
      }
      const session = await open.setModel(params.sessionId, params.value);
      const state = open.attach(session);
      return { configOptions: (await open.stateOf(session, state)).configOptions };
    })
    .onRequest("session/set_model", SetModelParams, async ({ params }) => {
      await (await ready()).setModel(params.sessionId, params.modelId);
      return {};
    });
}

/** session/prompt (`/yolo` and `/plan` toggle the mode) and session/cancel. */
function onPrompts(app: acp.AgentApp, ready: Ready, hooks: AcpAgentHooks): void {
  app
    .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
      const open = await ready();
      const { session, state } = await open.require(params.sessionId);
      const text = promptText(params.prompt);
      if (!text) throw acp.RequestError.invalidParams(undefined, "The prompt is empty.");
      const toggle = /^\/(yolo|plan)$/.exec(text.trim());
      if (toggle) {
        const modeId = toggle[1] as ModeId;
        await open.setMode(session.id, state.mode === modeId ? "default" : modeId);
        await client.notify(acp.methods.client.session.update, {
          sessionId: session.id,
          update: { sessionUpdate: "current_mode_update", currentModeId: state.mode },
        });
        return { stopReason: "end_turn" };
      }
      const summary = await runPrompt(open, client, state, text, promptImages(params.prompt));
      hooks.promptEnded?.();
      return promptResponse(summary);
    })
    .onNotification(acp.methods.agent.session.cancel, async ({ params }) => {
      await (await ready()).services.turns.cancel(params.sessionId);
    });
}

async function runPrompt(
  open: AcpSessions,
  client: acp.AgentContext,
  state: OpenSession,
  text: string,
  images: string[],
): Promise<TurnSummary> {
  const { services } = open;
  const permissions =
    services.approvals &&
    new PromptPermissions({ client, sessionId: state.id, workspace: state.workspace, approvals: services.approvals });
  const notify = (update: acp.SessionUpdate) =>
    client.notify(acp.methods.client.session.update, { sessionId: state.id, update });

  const onEvent = async (event: EventEnvelope) => {
    permissions?.observe(event);
    if (event.type === "session.updated" && (event.payload.mode !== undefined || event.payload.yolo !== undefined)) {
      // Plan approved in the web UI (or yolo switched there) while the client's prompt runs.
      const mode = modeOf(await services.sessions.get(state.id));
      if (mode !== state.mode) {
        state.mode = mode;
        await notify({ sessionUpdate: "current_mode_update", currentModeId: mode });
      }
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
  await permissions?.settle();
  if (summary.outcome === "error") process.stderr.write(`${errorLine(failureOf(summary))}\n`);
  return summary;
}

function promptResponse(summary: TurnSummary): acp.PromptResponse {
  if (summary.outcome === "error") {
    const failure = failureOf(summary);
    throw acp.RequestError.internalError({ code: failure.code }, failure.message);
  }
  const stopReason = acpStopReason(summary.outcome, summary.stopReason);
  // `usage` is the field of ACP's (still unstable) usage proposal; `_meta.usage` for clients that read only stable fields.
  return { stopReason, usage: summary.usage, _meta: { usage: summary.usage } } as acp.PromptResponse;
}

function failureOf(summary: TurnSummary): { code: string; message: string } {
  return summary.error ?? { code: "agent:internal", message: summary.message ?? "The turn failed." };
}
