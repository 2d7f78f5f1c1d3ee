import type * as acp from "@agentclientprotocol/sdk";
import type { ApprovalGate, ExternalAgentPort, TurnEmitter, TurnResult } from "../agent";
import { isWorldlineError } from "../errors";
import { localHost, type ToolHost } from "../host";
import type { ToolState } from "../protocol";
import { startAgentProgram, type AgentProgram } from "./agent-process";
import { ExternalTerminals } from "./terminals";
import { modelOf, turnStats, usageOf } from "./usage";

type Sdk = typeof import("@agentclientprotocol/sdk");

/**
 * After a cancel, how long the agent has to answer the prompt with `cancelled` (opencode does within
 * ~100 ms, mid-command too). One that stays silent is stuck: the turn ends and the agent is stopped,
 * so a later turn starts a fresh one rather than talking to an agent still busy with this one.
 */
const CANCEL_ANSWER_MS = 5_000;

/** Deleted sessions remembered so a prompt still queued for one starts no agent (ids are never reused). */
const MAX_REMEMBERED_DELETED = 10_000;

/** The ACP SDK (~50 ms to load), loaded when a session first starts an external agent, not at start-up. */
let loadedSdk: Sdk | undefined;
const loadSdk = async (): Promise<Sdk> => (loadedSdk ??= await import("@agentclientprotocol/sdk"));

/** One running external agent: its process, the ACP connection, and its session id there. */
interface AgentProcess {
  /** The SDK the connection was made with. */
  acp: Sdk;
  /** Where the session's workspace is: this machine, or its runner. */
  host: ToolHost;
  program: AgentProgram;
  /** The model the agent says it uses (session/new), for the turn's cost at Settings' prices. */
  model?: string;
  connection: acp.ClientConnection;
  remoteSessionId: string;
  workspace: string;
  terminals: ExternalTerminals;
  /** Its session was deleted and it is being stopped: its turn ends as cancelled, not as a failure. */
  forgotten?: boolean;
  /** Set while a turn runs: where updates and permission requests of the agent go. */
  turn?: {
    turnId: string;
    emit: TurnEmitter;
    signal: AbortSignal;
    gate: ApprovalGate;
    sessionId: string;
    messageId: string;
    /** The last state each tool call was given, for an update that only renames it. */
    toolStates: Map<string, ToolState>;
  };
}

/**
 * Worldline as an ACP client: a session whose `agentCommand` is set runs each
 * turn on that external agent (spawned once per session, kept for later turns).
 * Its updates become the session's events, its permission requests go through
 * Worldline's approval gate (so they wait in the queue like any tool call),
 * and its fs/terminal requests are served inside the workspace. The agent, its
 * files and its terminals are where the workspace is: on this machine, or on the
 * session's runner (through its host).
 */
export class ExternalAgents implements ExternalAgentPort {
  private readonly agents = new Map<string, Promise<AgentProcess>>();
  private readonly deleted = new Set<string>();

  async runTurn(input: Parameters<ExternalAgentPort["runTurn"]>[0]): Promise<TurnResult> {
    const started = Date.now();
    const { emit, turnId } = input;
    // A prompt that was queued behind the turn its delete cancelled.
    if (this.deleted.has(input.sessionId))
      return { outcome: "cancelled", message: "The session was deleted.", stats: turnStats(started) };
    emit.event({ type: "message.user", payload: { turnId, messageId: `msg_user_${turnId}`, text: input.prompt } });
    emit.event({ type: "turn.stage", payload: { turnId, stage: "planning" } });
    let agent: AgentProcess;
    try {
      agent = await this.agentFor(input.sessionId, input.host ?? localHost, input.workspace, input.command);
    } catch (error) {
      const message = `Could not start the external agent \`${input.command}\`: ${error instanceof Error ? error.message : String(error)}`;
      emit.event({ type: "turn.error", payload: { turnId, code: "acp:agent_failed", message } });
      return { outcome: "error", message, stats: turnStats(started) };
    }
    agent.turn = {
      turnId,
      emit,
      signal: input.signal,
      gate: input.gate,
      sessionId: input.sessionId,
      messageId: `msg_${turnId}`,
      toolStates: new Map(),
    };
    const { acp } = agent;
    let unanswered: ReturnType<typeof setTimeout> | undefined;
    let onAbort: () => void = () => undefined;
    // Resolves when a cancel went unanswered for CANCEL_ANSWER_MS; at once when the bridge shuts
    // down (server/agent/runtime.ts cancelAll): the agent is stopped, not waited for.
    const silent = new Promise<"silent">((resolve) => {
      onAbort = () => {
        if (shuttingDown(input.signal.reason)) return resolve("silent");
        void agent.connection.agent
          .notify(acp.methods.agent.session.cancel, { sessionId: agent.remoteSessionId })
          .catch(() => undefined); // The connection is closing: the agent is being stopped anyway.
        unanswered = setTimeout(() => resolve("silent"), CANCEL_ANSWER_MS);
      };
    });
    if (input.signal.aborted) onAbort();
    else input.signal.addEventListener("abort", onAbort, { once: true });
    const stats = (usage?: ReturnType<typeof usageOf>) => turnStats(started, usage, input.price(agent.model));
    try {
      const response = await Promise.race([
        agent.connection.agent.request(acp.methods.agent.session.prompt, {
          sessionId: agent.remoteSessionId,
          prompt: [{ type: "text", text: input.prompt }],
        }),
        silent,
      ]);
      if (response === "silent") {
        agent.turn = undefined;
        await this.stop(input.sessionId, agent);
        return { outcome: "cancelled", stats: stats() };
      }
      const outcome = response.stopReason === "cancelled" || input.signal.aborted ? "cancelled" : "completed";
      return { outcome, stats: stats(usageOf(response)) };
    } catch (error) {
      if (input.signal.aborted || agent.forgotten) return { outcome: "cancelled", stats: stats() };
      // A runner that vanished closes the connection: its error says why, the connection's only that it closed.
      const cause = agent.program.lost ?? error;
      const message = cause instanceof Error ? cause.message : String(cause);
      emit.event({
        type: "turn.error",
        payload: { turnId, code: "acp:agent_failed", message: `The external agent failed: ${message}` },
      });
      return { outcome: "error", message, stats: stats() };
    } finally {
      input.signal.removeEventListener("abort", onAbort);
      clearTimeout(unanswered);
      agent.turn = undefined;
    }
  }

  /** Bridge shutdown: every agent and everything it started, ended within the kill grace. */
  async closeAll(): Promise<void> {
    const all = await Promise.allSettled(this.agents.values());
    this.agents.clear();
    await Promise.all(all.map((result) => (result.status === "fulfilled" ? stopAgent(result.value) : undefined)));
  }

  /**
   * Stops the session's agent process (deleted, or idle: the next turn starts a new one). An
   * agent such as `opencode acp` holds half a gigabyte; one per forgotten session adds up.
   * An idle release leaves a turn that just started alone. A delete does not: the prompt queued
   * behind the turn it cancelled runs at once, and must not keep the agent (or start another).
   */
  async forgetSession(sessionId: string, why: "deleted" | "idle" = "idle"): Promise<void> {
    if (why === "deleted") {
      this.deleted.add(sessionId);
      if (this.deleted.size > MAX_REMEMBERED_DELETED) this.deleted.delete(this.deleted.values().next().value as string);
    }
    const pending = this.agents.get(sessionId);
    if (!pending) return;
    const agent = await pending.catch(() => undefined); // it never started: nothing to stop
    if (agent?.turn && why === "idle") return;
    if (this.agents.get(sessionId) === pending) this.agents.delete(sessionId);
    if (!agent) return;
    agent.forgotten = true;
    await stopAgent(agent);
  }

  /** Stops this session's agent if it is still the one given (a stuck agent after a cancel). */
  private async stop(sessionId: string, agent: AgentProcess): Promise<void> {
    const pending = this.agents.get(sessionId);
    // A start that failed left no agent to compare with.
    if (pending && (await pending.catch(() => undefined)) === agent) this.agents.delete(sessionId);
    await stopAgent(agent);
  }

  /** Agent processes running (tests bound it). */
  get size(): number {
    return this.agents.size;
  }

  private agentFor(sessionId: string, host: ToolHost, workspace: string, command: string): Promise<AgentProcess> {
    let agent = this.agents.get(sessionId);
    if (!agent) {
      agent = this.start(host, workspace, command);
      this.agents.set(sessionId, agent);
      // A failed start is not cached: the next turn tries again.
      agent.catch(() => this.agents.delete(sessionId));
    }
    return agent;
  }

  private async start(host: ToolHost, workspace: string, command: string): Promise<AgentProcess> {
    const acp = await loadSdk();
    // The bridge's environment on this machine, the runner's own on a runner (never the hub's).
    const program = await startAgentProgram(host, {
      command,
      cwd: workspace,
      onStderr: (chunk) => process.stderr.write(`[external agent] ${chunk}`),
    });
    const state = {
      acp,
      host,
      workspace,
      program,
      terminals: new ExternalTerminals(host, workspace, acp.RequestError),
    } as AgentProcess;
    void program.exited.then(() => {
      for (const [id, pending] of this.agents)
        void pending.then(
          (a) => a === state && this.agents.delete(id),
          () => undefined,
        );
    });
    state.connection = this.clientApp(state).connect(acp.ndJsonStream(program.stdin, program.stdout));
    const exited = program.exited.then(({ code }) =>
      Promise.reject(program.lost ?? new Error(`it exited with code ${code}`)),
    );
    const startup = (async () => {
      await state.connection.agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientInfo: { name: "worldline", version: "1" },
        clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
      });
      const created = await state.connection.agent.request(acp.methods.agent.session.new, {
        cwd: workspace,
        mcpServers: [],
      });
      state.remoteSessionId = created.sessionId;
      state.model = modelOf(created);
      return state;
    })();
    return Promise.race([startup, exited]);
  }

  private clientApp(state: AgentProcess): acp.ClientApp {
    const { acp, host } = state;
    // Symlinks followed where the workspace is (a runner checks its roots as well).
    const inside = async (file: string) => {
      const resolved = await host.resolve(state.workspace, file);
      if (!resolved.inside)
        throw acp.RequestError.invalidParams(
          { path: file },
          "Worldline serves files inside the session's workspace only.",
        );
      return resolved;
    };
    return acp
      .client({ name: "worldline" })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        if (state.turn) forwardUpdate(state.turn, params.update);
      })
      .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => askGate(state, params))
      .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => {
        const text = await host.readText((await inside(params.path)).real);
        if (text === undefined) throw acp.RequestError.resourceNotFound(params.path);
        if (!params.line && !params.limit) return { content: text };
        const lines = text.split("\n");
        const from = Math.max(0, (params.line ?? 1) - 1);
        return { content: lines.slice(from, params.limit ? from + params.limit : undefined).join("\n") };
      })
      .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => {
        await host.writeResolved(await inside(params.path), params.content);
        return {};
      })
      .onRequest(acp.methods.client.terminal.create, ({ params }) => state.terminals.create(params))
      .onRequest(acp.methods.client.terminal.output, ({ params }) => state.terminals.output(params.terminalId))
      .onRequest(acp.methods.client.terminal.waitForExit, ({ params }) =>
        state.terminals.waitForExit(params.terminalId),
      )
      .onRequest(acp.methods.client.terminal.kill, async ({ params }) => {
        await state.terminals.kill(params.terminalId);
        return {};
      })
      .onRequest(acp.methods.client.terminal.release, async ({ params }) => {
        await state.terminals.release(params.terminalId);
        return {};
      });
  }
}

/** The reason the runtime aborts turns with when the bridge shuts down (server/agent/runtime.ts). */
function shuttingDown(reason: unknown): boolean {
  return isWorldlineError(reason) && reason.code === "bridge:gone";
}

/**
 * Ends the agent and everything it started through the one kill path of its host's machine: its
 * terminals' groups, and its own tree (SIGTERM, SIGKILL after the grace: `opencode acp` catches
 * the first SIGTERM). Resolves when they are gone.
 */
async function stopAgent(agent: AgentProcess): Promise<void> {
  agent.connection.close();
  await Promise.all([agent.terminals.releaseAll(), agent.program.process.stop()]);
}

/** The external agent's updates as the session's events. */
function forwardUpdate(turn: NonNullable<AgentProcess["turn"]>, update: acp.SessionUpdate): void {
  const { turnId, emit } = turn;
  switch (update.sessionUpdate) {
    case "agent_message_chunk":
    case "agent_thought_chunk":
      if (update.content.type !== "text") return;
      emit.event({
        type: "message.part.delta",
        payload: {
          turnId,
          messageId: turn.messageId,
          part: update.sessionUpdate === "agent_message_chunk" ? "text" : "reasoning",
          delta: update.content.text,
        },
      });
      return;
    case "tool_call":
      turn.toolStates.set(update.toolCallId, update.status === "in_progress" ? "running" : "pending");
      emit.event({
        type: "tool.call",
        payload: {
          turnId,
          messageId: turn.messageId,
          toolCallId: update.toolCallId,
          name: update.title,
          args: update.rawInput ?? {},
        },
      });
      if (update.status === "in_progress")
        emit.event({ type: "tool.state", payload: { turnId, toolCallId: update.toolCallId, state: "running" } });
      return;
    case "tool_call_update": {
      const { toolCallId } = update;
      // Agents such as opencode name the call and give its command only here (a `bash` card showed just its cwd).
      const detail = {
        ...(update.title ? { name: update.title } : {}),
        ...(update.rawInput !== undefined && update.rawInput !== null ? { args: update.rawInput } : {}),
      };
      if (update.status === "completed" || update.status === "failed") {
        const output = (update.content ?? []).map(contentText).filter(Boolean).join("\n");
        const state = update.status === "completed" ? "completed" : "error";
        turn.toolStates.set(toolCallId, state);
        const isError = update.status === "failed";
        emit.event({ type: "tool.state", payload: { turnId, toolCallId, state, output, isError, ...detail } });
        return;
      }
      if (update.status === "in_progress") turn.toolStates.set(toolCallId, "running");
      if (update.status !== "in_progress" && Object.keys(detail).length === 0) return;
      const state = turn.toolStates.get(toolCallId) ?? "pending";
      emit.event({ type: "tool.state", payload: { turnId, toolCallId, state, ...detail } });
      return;
    }
    case "plan":
      emit.event({
        type: "todo.updated",
        payload: {
          items: update.entries.map((entry) => ({
            title: entry.content,
            status: entry.status === "completed" ? "done" : entry.status,
          })),
        },
      });
      return;
    default:
      return;
  }
}

function contentText(content: acp.ToolCallContent): string {
  if (content.type === "content") return content.content.type === "text" ? content.content.text : "";
  if (content.type === "diff") return `Edited ${content.path}`;
  return "";
}

/** A permission request of the external agent, decided by Worldline's gate (rules → yolo → the queue). */
async function askGate(
  state: AgentProcess,
  params: acp.RequestPermissionRequest,
): Promise<acp.RequestPermissionResponse> {
  const turn = state.turn;
  const pick = (kinds: acp.PermissionOptionKind[]) => params.options.find((option) => kinds.includes(option.kind));
  if (!turn) return { outcome: { outcome: "cancelled" } };
  const title = params.toolCall.title ?? "An external agent action";
  const decision = await turn.gate.check({
    sessionId: turn.sessionId,
    turnId: turn.turnId,
    toolCallId: params.toolCall.toolCallId,
    tool: title,
    args: params.toolCall.rawInput ?? {},
    need: { level: "ask", subject: title, scope: title, description: title, risk: "medium" },
    signal: turn.signal,
  });
  if (turn.signal.aborted) return { outcome: { outcome: "cancelled" } };
  const option = decision.approved ? pick(["allow_once", "allow_always"]) : pick(["reject_once", "reject_always"]);
  return option
    ? { outcome: { outcome: "selected", optionId: option.optionId } }
    : { outcome: { outcome: "cancelled" } };
}
