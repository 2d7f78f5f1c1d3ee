import { randomUUID } from "node:crypto";
import type { ApprovalGate, GateRequest, RejoinRequest } from "../agent";
import { errorMessage, WorldlineError } from "../errors";
import type { ApprovalChange, ApprovalsQuery, ApprovalView, EventEnvelope } from "../protocol";
import * as store from "../store";
import type { ApprovalDecision } from "../tools/types";
import {
  allowForSession,
  checkPasswordAnswer,
  decideByPolicy,
  eventsOfTask,
  interruptOrphanRequests,
  listApprovalRows,
  notPendingError,
  passwordExpected,
  reportPollError,
  taskOf,
} from "./queries";
import { RuleBook } from "./rules";
import { PASSWORD_PROMPT_KEY, toApprovalView } from "./views";

import type { ApprovalServiceDeps, DecideInput, Outcome, PasswordRequest, Retry, Waiter } from "./service-types";

/** Who "decides" requests found pending at start-up. */
const RESTART_DECIDER = "bridge restart";
/**
 * How long a person's decision (an HTTP or socket request) waits on a store that does not answer
 * before it is refused with a 503 to try again: it rides out a blip, but a client is not kept
 * hanging through an outage (a turn's own writes wait much longer, server/store/durable.ts).
 */
const DECISION_RETRY_FOR_MS = 5_000;

/**
 * The durable approval queue and the one gate every tool call passes:
 * rules → yolo → ask. A request is a row plus an `approval.requested` event on
 * the session log; the first decision wins (a conditional update), every later
 * one gets `approval:already_decided` (409).
 *
 * Several processes. The process whose turn asked (it holds the waiting call) owns the
 * request's events. Any process may decide it (the conditional update is the arbiter);
 * one without the waiting call only writes the row, tells its own listeners and the bus
 * (server/bus: Redis in team mode, a tail of the database on one machine). The owner, told by
 * the bus while calls wait or someone listens, re-reads the pending rows, records an "allow for
 * this session" rule, appends `approval.decided` and resumes the call. A password can only be
 * given to the owner (it is never written down); others may reject.
 */
export class ApprovalService {
  readonly rules: RuleBook;
  /** Hand this to AgentRuntime. */
  readonly gate: ApprovalGate = {
    check: (request) => this.check(request),
    askPassword: (request) => this.askPassword(request),
    askBudget: (request) => this.askBudget(request),
    rejoin: (request) => this.rejoin(request),
  };
  private readonly waiters = new Map<string, Waiter>();
  private readonly listeners = new Set<(change: ApprovalChange) => void>();
  /** Requests this process has announced: pending, or decided (kept until the poll no longer sees them pending). */
  private readonly known = new Map<string, "pending" | "decided">();
  /** Requests this process is deciding right now (the poll leaves them alone). */
  private readonly deciding = new Set<string>();
  private refreshing: Promise<void> | null = null;
  private refreshAgain = false;

  constructor(private readonly deps: ApprovalServiceDeps) {
    this.rules = new RuleBook(deps);
    deps.log.watchApprovals({
      wanted: () => this.listeners.size > 0 || this.waiters.size > 0,
      changed: () => this.refresh(),
    });
  }

  async check(request: GateRequest): Promise<ApprovalDecision> {
    const { need } = request;
    const byPolicy = await decideByPolicy(this.deps, request, (read) => store.durably(read, this.forTurn(request)));
    if (byPolicy) return byPolicy;
    const outcome = await this.ask(request, {
      kind: "tool",
      args: request.args,
      description: need.description,
      risk: need.risk,
      diff: need.diff,
      scope: need.scope,
    });
    if (!outcome || !("decision" in outcome)) return { approved: false, decidedBy: "cancelled before a decision" };
    const decidedBy = outcome.decidedBy ?? "unknown";
    if (outcome.decision === "reject") return { approved: false, feedback: outcome.feedback || undefined, decidedBy };
    return { approved: true, decidedBy };
  }

  /** Asks a human for a sudo password through the queue; null when declined or cancelled. The password is only returned, never kept. */
  async askPassword(request: PasswordRequest): Promise<string | null> {
    const outcome = await this.ask(request, {
      kind: "password",
      args: { [PASSWORD_PROMPT_KEY]: request.prompt },
      description: request.prompt,
      risk: "high",
      scope: null,
    });
    return outcome && "password" in outcome ? outcome.password : null;
  }

  /**
   * A turn past a budget waits on a request (`tool: "budget"`) that only a person decides: no rule,
   * yolo or "allow for this session" applies to it. True when allowed.
   */
  async askBudget(request: Parameters<NonNullable<ApprovalGate["askBudget"]>>[0]): Promise<boolean> {
    const { args, description } = request;
    const outcome = await this.ask(
      { ...request, toolCallId: `budget_${randomUUID()}`, tool: "budget" },
      { kind: "tool", args, description, risk: "medium", scope: null },
    );
    return Boolean(outcome && "decision" in outcome && outcome.decision !== "reject");
  }

  async decide(approvalId: string, input: DecideInput): Promise<ApprovalView> {
    const waiter = this.waiters.get(approvalId);
    if (!waiter) {
      const existing = await this.forPerson(() => store.getApproval(this.deps.db, approvalId));
      // Asked by another process: a password request can only be declined from here.
      if (
        input.decision !== "reject" &&
        existing?.status === "pending" &&
        toApprovalView(existing).kind === "password"
      ) {
        throw passwordExpected();
      }
      if (existing?.status === "pending") await this.checkOwnerLive(existing);
    }
    if (waiter?.kind === "password") {
      if (input.decision !== "reject") {
        throw passwordExpected();
      }
      return this.providePassword(approvalId, null, input.decidedBy);
    }
    const reject = input.decision === "reject";
    const feedback = reject ? input.feedback?.trim() || null : null;
    const row = await this.decideRow(approvalId, {
      status: reject ? "rejected" : "approved",
      decision: input.decision,
      feedback,
      decidedBy: input.decidedBy,
    });
    if (!row) throw await this.notPending(approvalId);
    // A turn taken over here may have started waiting on it meanwhile (rejoin): it gets this decision.
    const waiting = waiter ?? this.waiters.get(approvalId);
    if (!waiting) return this.recordDecided(row, { decision: input.decision, feedback: feedback ?? undefined });
    if (input.decision === "allow_session" && waiting.scope) {
      // Recorded before the waiting call resumes, so the next matching call in this turn already passes.
      await allowForSession(this.deps.db, row, waiting.scope, (write) => this.forPerson(write));
    }
    const view = this.finish(row, { decision: input.decision, feedback: feedback ?? undefined });
    waiting.resolve({ decision: input.decision, feedback: feedback ?? undefined, decidedBy: input.decidedBy });
    return view;
  }

  /** Answers a password request; `null` declines. */
  async providePassword(approvalId: string, password: string | null, decidedBy: string): Promise<ApprovalView> {
    const waiter = this.waiters.get(approvalId);
    const existing = await this.forPerson(() => store.getApproval(this.deps.db, approvalId));
    checkPasswordAnswer(existing, { waiting: Boolean(waiter), declining: password === null });
    const row = await this.decideRow(approvalId, {
      status: password === null ? "rejected" : "approved",
      decision: password === null ? "reject" : "password_given",
      decidedBy,
    });
    if (!row) throw await this.notPending(approvalId);
    if (!waiter) return this.recordDecided(row, { decision: "reject" });
    const view = this.finish(row, { decision: password === null ? "reject" : "password_given" });
    waiter.resolve({ password });
    return view;
  }

  async get(approvalId: string): Promise<ApprovalView> {
    const row = await store.getApproval(this.deps.db, approvalId);
    if (!row) throw new WorldlineError("approval:not_found", `No approval request with id "${approvalId}".`);
    return toApprovalView(row, this.waiters.get(row.id)?.scope ?? null);
  }

  /** Pending requests oldest first; decided ones ("decided", "all" or one status) newest first. */
  async list(query: Partial<ApprovalsQuery> = {}): Promise<ApprovalView[]> {
    const rows = await listApprovalRows(this.deps.db, query);
    return rows.map((row) => toApprovalView(row, this.waiters.get(row.id)?.scope ?? null));
  }

  /** A turn as the HTTP API names it (a task): its session and status. */
  task(taskId: string): Promise<{ id: string; sessionId: string; status: string }> {
    return taskOf(this.deps.db, taskId);
  }

  /** Every event of one task, in log order (what a resumed SSE stream replays). */
  taskEvents(taskId: string): Promise<EventEnvelope[]> {
    return eventsOfTask(this.deps, taskId);
  }

  /** Hears every new request and every decision across all sessions (the /approvals page, ACP). */
  onChange(listener: (change: ApprovalChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Pending requests of owners that are gone (server/leases: none of `live`) are marked
   * interrupted, visibly; requests a live process waits on are left to it, and so are those of
   * `keptTurns` (turns that wait across the restart, server/agent/run-state.ts).
   */
  async interruptOrphans(live: string[], keptTurns: ReadonlySet<string> = new Set()): Promise<number> {
    const interrupted = await interruptOrphanRequests(this.deps, live, RESTART_DECIDER, keptTurns);
    if (interrupted > 0) this.deps.log.approvalsChanged();
    return interrupted;
  }

  private async ask(
    request: Pick<GateRequest, "sessionId" | "turnId" | "toolCallId" | "tool" | "signal" | "onAsked">,
    what: {
      kind: "tool" | "password";
      args: unknown;
      description: string;
      risk: string;
      diff?: string;
      scope: string | null;
    },
  ): Promise<Outcome | null> {
    const { signal, sessionId, turnId, toolCallId, tool } = request;
    if (signal.aborted) return null;
    const row = await this.createRequest(request, what);
    if (!row) return null;
    this.known.set(row.id, "pending");
    this.deps.log.approvalsChanged();
    await request.onAsked?.(row.id);
    const outcome = this.wait(row.id, { ...request, kind: what.kind, scope: what.scope });
    const { log } = this.deps;
    log.append(
      sessionId,
      {
        type: "approval.requested",
        payload: {
          turnId,
          approvalId: row.id,
          toolCallId,
          tool,
          args: what.args,
          description: what.description,
          riskLevel: toApprovalView(row).risk_level,
          diff: what.diff,
          kind: what.kind,
          scope: what.scope ?? undefined,
        },
      },
      turnId,
    );
    log.append(
      sessionId,
      {
        type: "turn.stage",
        payload: { turnId, stage: what.kind === "password" ? "waiting_for_password" : "waiting_for_approval" },
      },
      turnId,
    );
    this.broadcast({ change: "requested", approval: toApprovalView(row, what.scope) });
    return outcome;
  }

  /**
   * Waits again on a request a turn asked before its bridge stopped, for the bridge that took the
   * turn over (server/agent/run-state.ts): the request stayed pending, and is decided here or
   * anywhere as if this process had asked it. Null when it ended without a decision.
   */
  async rejoin(request: RejoinRequest): Promise<Outcome | null> {
    const row = await store.durably(() => store.getApproval(this.deps.db, request.approvalId), this.forTurn(request));
    if (!row || request.signal.aborted) return null;
    this.known.set(row.id, "pending");
    const outcome = this.wait(row.id, { ...request, toolCallId: row.toolCallId, tool: row.tool });
    // Decided before the waiter was in place (here, or by another process): it takes that answer.
    const now = await store.durably(() => store.getApproval(this.deps.db, row.id), this.forTurn(request));
    if (now?.status !== "pending" && this.known.get(row.id) === "pending" && this.waiters.has(row.id)) {
      this.known.delete(row.id);
      if (now) await this.decidedElsewhere(now);
      else this.waiters.get(row.id)?.resolve(null);
    }
    return outcome;
  }

  /** The call waits on the request until it is decided, or its turn is cancelled (the request too, then). */
  private async wait(
    approvalId: string,
    waiter: Omit<Waiter, "resolve"> & { signal: AbortSignal },
  ): Promise<Outcome | null> {
    const { signal, kind, sessionId, turnId, toolCallId, tool, scope } = waiter;
    const outcome = new Promise<Outcome | null>((resolve) => {
      const onAbort = () => void this.cancel(approvalId).finally(() => resolve(null));
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiters.set(approvalId, {
        kind,
        sessionId,
        turnId,
        toolCallId,
        tool,
        scope,
        resolve: (value) => {
          signal.removeEventListener("abort", onAbort);
          resolve(value);
        },
      });
    });
    try {
      return await outcome;
    } finally {
      this.waiters.delete(approvalId);
    }
  }

  /**
   * The request's row, fenced on the asking turn's claim (server/leases/fence.ts): a bridge whose
   * claim was taken asks nobody; its turn is told and stops (null).
   */
  private async createRequest(
    request: Pick<GateRequest, "sessionId" | "turnId" | "toolCallId" | "tool" | "signal">,
    what: { args: unknown; description: string; risk: string; diff?: string },
  ): Promise<store.ApprovalRow | null> {
    const { sessionId, turnId, toolCallId, tool } = request;
    const fence = this.deps.log.fenceOf(sessionId);
    const claim = fence?.turnId === turnId ? fence : undefined;
    const data = {
      id: store.newId(), // the same on every try: a retry finds the row a lost answer created
      sessionId,
      turnId,
      toolCallId,
      tool,
      args: JSON.stringify(what.args ?? null),
      description: what.description,
      riskLevel: what.risk,
      diff: what.diff ?? null,
      ownerId: this.deps.ownerId ?? null,
    };
    try {
      return await store.durably(() => store.createApproval(this.deps.db, data, claim), this.forTurn(request));
    } catch (error) {
      if (!claim || !store.isFenced(error)) throw error;
      claim.lose(error);
      return null;
    }
  }

  /**
   * The turn was cancelled while its call waited: the request becomes `cancelled` unless a decision
   * just won, or another bridge took the waiting turn over (a stale bridge waking up after a
   * takeover cancels nothing of it). Retried while the store does not answer (a request left
   * pending would wait forever: its owner is alive, so no sweep ends it); given up after the
   * durable writer's window.
   */
  private async cancel(approvalId: string): Promise<void> {
    const cancelled = { status: "cancelled", decidedBy: "turn cancelled" };
    const retry: Retry = (write) => store.durably(write);
    const row = await this.decideRow(approvalId, cancelled, retry, this.deps.ownerId).catch((error: unknown) => {
      console.error(`[worldline] approval ${approvalId} could not be marked cancelled: ${errorMessage(error)}`);
      return null;
    });
    if (row) this.finish(row, {});
  }

  private finish(row: store.ApprovalRow, outcome: { decision?: string; feedback?: string }): ApprovalView {
    const view = toApprovalView(row);
    this.deps.log.append(
      row.sessionId,
      {
        type: "approval.decided",
        payload: {
          approvalId: row.id,
          toolCallId: row.toolCallId,
          turnId: row.turnId ?? undefined,
          status: view.status as "approved" | "rejected" | "interrupted" | "cancelled",
          decision: outcome.decision,
          feedback: outcome.feedback,
          decidedBy: row.decidedBy ?? undefined,
        },
      },
      row.turnId ?? undefined,
    );
    this.broadcast({ change: "decided", approval: view });
    return view;
  }

  /**
   * The conditional update, marked so a refresh does not take this process's own decision for
   * another's. `retry` runs it while the store does not answer (a person's decision waits briefly by
   * default); a retry after an answer that was lost finds the row decided as asked and takes it as
   * this decision, not someone else's.
   */
  private async decideRow(
    approvalId: string,
    data: Parameters<typeof store.decidePendingApproval>[2],
    retry: Retry = (write) => this.forPerson(write),
    ownedBy?: string,
  ): Promise<store.ApprovalRow | null> {
    this.deciding.add(approvalId);
    let tried = false;
    const write = async () => {
      const again = tried;
      tried = true;
      const row = await store.decidePendingApproval(this.deps.db, approvalId, data, ownedBy);
      if (row || !again) return row;
      const now = await store.getApproval(this.deps.db, approvalId);
      const same =
        now?.status === data.status &&
        now.decidedBy === (data.decidedBy ?? null) &&
        now.decision === (data.decision ?? null);
      return same ? now : null;
    };
    try {
      const row = await retry(write);
      if (row) {
        this.known.set(approvalId, "decided");
        this.deps.log.approvalsChanged();
      }
      return row;
    } finally {
      this.deciding.delete(approvalId);
    }
  }

  /**
   * A decision accepted here on a request another process asked: its `approval.decided` is written
   * here, at once, so every accepted decision is in the log even if the owner dies before it
   * notices; the owner only resumes its call.
   */
  private async recordDecided(
    row: store.ApprovalRow,
    outcome: { decision?: string; feedback?: string },
  ): Promise<ApprovalView> {
    await this.deps.log.open(row.sessionId);
    return this.finish(row, outcome);
  }

  /**
   * A decision reaches a live owner or is refused: the process that asked is gone (killed, cut off)
   * and its turn is about to be interrupted, so "approved" would run nothing.
   * While this bridge cannot tell (back from a database outage, the asker has not beaten since),
   * the decision is refused as unavailable for now, with when to try again: a 503 with Retry-After,
   * not a 409, since nothing is wrong with the request and the asker may well be alive.
   */
  private async checkOwnerLive(row: store.ApprovalRow): Promise<void> {
    const liveness = this.deps.liveness;
    if (!liveness || row.ownerId === null || row.ownerId === this.deps.ownerId) return;
    const owner = await liveness(row.ownerId);
    if (owner.state === "live") return;
    if (owner.state === "unknown") {
      const seconds = Math.max(1, Math.ceil(owner.retryAfterMs / 1000));
      throw new WorldlineError(
        "approval:unavailable",
        `This bridge is back from a database outage and cannot tell yet whether the bridge that asked for this approval is still running; nothing was decided. Try again in ${seconds} s.`,
        { details: { retry_after_s: seconds } },
      );
    }
    throw new WorldlineError(
      "approval:owner_gone",
      "The bridge that asked for this approval has stopped; its turn is being interrupted, so this decision would run nothing. Resume the session and prompt again.",
    );
  }

  /** A request decided elsewhere: the decider wrote its event; here only listeners hear it. */
  private announceDecided(row: store.ApprovalRow): ApprovalView {
    const view = toApprovalView(row);
    this.broadcast({ change: "decided", approval: view });
    return view;
  }

  /** Re-reads the queue once the bus says it changed; a change heard during a read gets one more read. */
  private refresh(): void {
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = this.readPending()
      .catch(reportPollError)
      .finally(() => {
        this.refreshing = null;
        if (this.refreshAgain) {
          this.refreshAgain = false;
          this.refresh();
        }
      });
  }

  /**
   * One look at the pending rows: requests of other processes are announced, and requests
   * that stopped being pending without a decision here were decided elsewhere (a waiting
   * call here resumes).
   */
  private async readPending(): Promise<void> {
    const rows = await store.listApprovals(this.deps.db, { status: ["pending"], limit: 1_000 });
    const pending = new Set(rows.map((row) => row.id));
    for (const row of rows) {
      if (this.known.has(row.id)) continue;
      this.known.set(row.id, "pending");
      this.broadcast({ change: "requested", approval: toApprovalView(row) });
    }
    for (const [id, state] of [...this.known]) {
      if (pending.has(id) || this.deciding.has(id)) continue;
      if (state === "decided") {
        this.known.delete(id);
        continue;
      }
      const row = await store.getApproval(this.deps.db, id);
      if (row?.status === "pending" || this.deciding.has(id) || this.known.get(id) !== "pending") continue; // asked or decided here meanwhile
      this.known.delete(id);
      if (row) await this.decidedElsewhere(row);
      else this.waiters.get(id)?.resolve(null); // its session was deleted
    }
  }

  /** Another process decided (or interrupted) a request: the call waiting here resumes with that answer. */
  private async decidedElsewhere(row: store.ApprovalRow): Promise<void> {
    const waiter = this.waiters.get(row.id);
    if (!waiter) return void this.announceDecided(row);
    const feedback = row.feedback ?? undefined;
    const decision =
      row.decision === "allow_once" || row.decision === "allow_session" || row.decision === "reject"
        ? row.decision
        : undefined;
    if (decision === "allow_session" && waiter.scope) {
      await allowForSession(this.deps.db, row, waiter.scope, (write) => store.durably(write));
    }
    // The decider wrote `approval.decided` (recordDecided); an interruption by a sweep wrote its own.
    this.announceDecided(row);
    if (waiter.kind === "password") return waiter.resolve({ password: null });
    waiter.resolve(
      row.status === "approved" || row.status === "rejected"
        ? { decision: decision ?? "reject", feedback, decidedBy: row.decidedBy ?? undefined }
        : null,
    );
  }

  /**
   * How a turn's gate reads and writes wait on a store that does not answer: like the turn's own
   * (server/store/durable.ts), told in its transcript, stopped when the turn is cancelled.
   */
  private forTurn(request: Pick<GateRequest, "sessionId" | "turnId" | "signal">): store.DurableOptions {
    const { sessionId, turnId, signal } = request;
    const notice = (text: string, level: "warning" | "info") =>
      this.deps.log.append(sessionId, { type: "notice", payload: { level, text, turnId } }, turnId);
    return { ...store.turnNotices(notice), signal };
  }

  /** A person's decision: rides out a blip, then a 503 (`store:unavailable`) to try again. */
  private forPerson<T>(read: () => Promise<T>): Promise<T> {
    return store.durably(read, { retryForMs: DECISION_RETRY_FOR_MS });
  }

  private notPending(approvalId: string): Promise<WorldlineError> {
    return notPendingError(this.deps.db, approvalId);
  }

  private broadcast(change: ApprovalChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (error) {
        // One broken listener (a closed socket) must not stop the others or the decision.
        console.error("[worldline] approval listener failed:", error);
      }
    }
  }
}
