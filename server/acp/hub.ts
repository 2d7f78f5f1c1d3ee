import * as acp from "@agentclientprotocol/sdk";
import { io, type Socket } from "socket.io-client";
import type { Ack, EventEnvelope, TurnOutcome } from "../protocol";
import { errorMessage } from "../errors";
import { PromptPermissions, type ApprovalsPort } from "./permissions";
import { promptText } from "./prompt";
import { acpStopReason } from "./turn";
import { UpdateTranslator } from "./updates";

/** A hub that does not answer the socket handshake within this is reported, not waited on forever. */
const CONNECT_TIMEOUT_MS = 15_000;
/** A command the hub does not acknowledge within this fails the ACP request that sent it. */
const COMMAND_TIMEOUT_MS = 30_000;

interface HubSession {
  id: string;
  workspace: string;
  translator: UpdateTranslator;
  /** Where the session's live events go while a prompt of this client runs. */
  listener: ((event: EventEnvelope) => void) | null;
}

/**
 * `worldline acp --hub <url>` with `WORLDLINE_API_TOKEN`: an ACP agent on stdio whose sessions
 * live on a hub. It drives them as the token's person over the hub's own API (HTTP for
 * creation, socket.io for prompts, events and approvals), so the hub's roles and shares apply
 * and `decided_by` names that person. The agent loop, tools and model keys stay on the hub.
 */
export function createHubAcpAgent(hub: { url: string; token: string; version: string }): acp.AgentApp {
  let socket: Promise<Socket> | undefined;
  const sessions = new Map<string, HubSession>();

  const connect = (): Promise<Socket> =>
    (socket ??= new Promise<Socket>((resolve, reject) => {
      const client = io(hub.url, {
        auth: { token: hub.token },
        transports: ["websocket"],
        timeout: CONNECT_TIMEOUT_MS,
      });
      client.once("connect", () => resolve(client));
      client.once("connect_error", (error) => {
        client.close();
        socket = undefined;
        reject(acp.RequestError.authRequired(undefined, `The hub ${hub.url} refused the connection: ${error.message}`));
      });
      client.on("session.events", ({ sessionId, events }: { sessionId: string; events: EventEnvelope[] }) => {
        const session = sessions.get(sessionId);
        for (const event of events) session?.listener?.(event);
      });
    }));

  const command = async <T>(name: string, payload: Record<string, unknown>): Promise<T> => {
    const client = await connect();
    const ack = (await client
      .timeout(COMMAND_TIMEOUT_MS)
      .emitWithAck(name, { commandId: crypto.randomUUID(), ...payload })) as Ack<T>;
    if (!ack.ok) throw acp.RequestError.internalError({ code: ack.error.code }, ack.error.message);
    return ack.data;
  };

  const approvals: ApprovalsPort = {
    // decidedBy is the hub's to record: the token's person.
    decide: (approvalId, { decision, feedback }) => command("approval.decide", { approvalId, decision, feedback }),
  };

  const open = (summary: SummaryOnHub): HubSession => {
    const session: HubSession = {
      id: summary.id,
      workspace: summary.workspace,
      translator: new UpdateTranslator(summary.workspace),
      listener: null,
    };
    sessions.set(session.id, session);
    return session;
  };

  const requireSession = (sessionId: string): HubSession => {
    const session = sessions.get(sessionId);
    if (!session) throw acp.RequestError.sessionNotFound(sessionId);
    return session;
  };

  return acp
    .agent({ name: "worldline" })
    .onRequest(acp.methods.agent.initialize, async () => {
      await connect();
      return {
        protocolVersion: acp.PROTOCOL_VERSION,
        agentInfo: { name: "worldline", title: "Worldline (hub)", version: hub.version },
        authMethods: [],
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { embeddedContext: true },
          sessionCapabilities: { list: {} },
        },
      };
    })
    .onRequest(acp.methods.agent.session.new, async ({ params }) => {
      const created = await hubApi<SummaryOnHub>(hub, "/api/v1/sessions", { workspace: params.cwd }).catch(
        (error: unknown) => {
          throw acp.RequestError.invalidParams({ cwd: params.cwd }, errorMessage(error));
        },
      );
      const session = open(created);
      await command("session.subscribe", { sessionId: session.id, afterSeq: 0 });
      return { sessionId: session.id };
    })
    .onRequest(acp.methods.agent.session.list, async ({ params }) => {
      // The hub lists only the sessions this person may see.
      const all = await hubApi<SummaryOnHub[]>(hub, "/api/v1/sessions");
      return {
        sessions: all
          .filter((session) => !params.cwd || session.workspace === params.cwd)
          .map((session) => ({
            sessionId: session.id,
            cwd: session.workspace,
            title: session.title,
            updatedAt: session.updated_at,
          })),
        nextCursor: null,
      };
    })
    .onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
      const summary = await hubApi<SummaryOnHub>(hub, `/api/v1/sessions/${encodeURIComponent(params.sessionId)}`).catch(
        () => {
          throw acp.RequestError.sessionNotFound(params.sessionId);
        },
      );
      const session = open(summary);
      // The conversation so far, replayed as updates, then live events from where it ends.
      const { events } = await command<{ events: EventEnvelope[] }>("session.subscribe", {
        sessionId: session.id,
        afterSeq: 0,
      });
      for (const event of events)
        for (const update of session.translator.translate(event, { replay: true }))
          await client.notify(acp.methods.client.session.update, { sessionId: session.id, update });
      return {};
    })
    .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
      const session = requireSession(params.sessionId);
      const text = promptText(params.prompt);
      if (!text) throw acp.RequestError.invalidParams(undefined, "The prompt is empty.");
      const outcome = await runHubTurn(session, client, text, command, approvals);
      if (outcome.outcome === "error")
        throw acp.RequestError.internalError({ code: "agent:turn_failed" }, outcome.message ?? "The turn failed.");
      return { stopReason: acpStopReason(outcome.outcome) };
    })
    .onNotification(acp.methods.agent.session.cancel, async ({ params }) => {
      await command("turn.cancel", { sessionId: params.sessionId }).catch((error: unknown) =>
        // A notification has no answer to carry the failure: the log has it.
        console.error(`[worldline acp] cancel on the hub failed: ${errorMessage(error)}`),
      );
    });
}

/** What this agent reads of the hub's session summaries. */
interface SummaryOnHub {
  id: string;
  workspace: string;
  title: string;
  updated_at: string;
}

/** GET (or POST with a body) on the hub's API as the token's person; a refusal becomes an error with the hub's reason. */
async function hubApi<T>(hub: { url: string; token: string }, pathname: string, body?: unknown): Promise<T> {
  const response = await fetch(`${hub.url}${pathname}`, {
    method: body === undefined ? "GET" : "POST",
    headers: {
      authorization: `Bearer ${hub.token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // A body that is not JSON: the status says enough.
  const answer = (await response.json().catch(() => null)) as { error?: { message: string } } | null;
  if (!response.ok)
    throw new Error(`The hub answered ${response.status}: ${answer?.error?.message ?? "no reason given"}`);
  return answer as T;
}

/** One prompt on the hub: live events become session updates, approvals become permission requests. */
async function runHubTurn(
  session: HubSession,
  client: acp.AgentContext,
  text: string,
  command: <T>(name: string, payload: Record<string, unknown>) => Promise<T>,
  approvals: ApprovalsPort,
): Promise<{ outcome: TurnOutcome; message?: string }> {
  const permissions = new PromptPermissions({ client, sessionId: session.id, workspace: session.workspace, approvals });
  const finished = new Map<string, { outcome: TurnOutcome; message?: string }>();
  let turnId: string | undefined;
  let done!: (value: { outcome: TurnOutcome; message?: string }) => void;
  const completed = new Promise<{ outcome: TurnOutcome; message?: string }>((resolve) => (done = resolve));
  // Updates go out one after another, in the order the hub logged the events.
  let chain = Promise.resolve();

  session.listener = (event) => {
    chain = chain
      .then(async () => {
        permissions.observe(event);
        for (const update of session.translator.translate(event))
          await client.notify(acp.methods.client.session.update, { sessionId: session.id, update });
        if (event.type === "turn.completed") {
          finished.set(event.payload.turnId, { outcome: event.payload.outcome, message: event.payload.message });
          if (event.payload.turnId === turnId) done(finished.get(turnId)!);
        }
      })
      .catch((error: unknown) => console.error(`[worldline acp] forwarding an event failed: ${errorMessage(error)}`));
  };
  try {
    turnId = (await command<{ turnId: string }>("turn.prompt", { sessionId: session.id, text })).turnId;
    // The turn may have ended before its id came back (a fast answer).
    const early = finished.get(turnId);
    if (early) done(early);
    const result = await completed;
    await chain;
    await permissions.settle();
    return result;
  } finally {
    session.listener = null;
  }
}
