import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { errorMessage, WorldlineError } from "../errors";
import type { RoutineRunView, RoutineView } from "../protocol";
import * as store from "../store";
import { checkSchedule, Scheduler, SCHEDULE_SYNC_MS } from "./schedule";

/** Outcomes a person hears of as a failure. */
const FAILED = new Set(["failed", "error", "interrupted", "max_steps", "loop_detected"]);

/** A run that ended, as the notifier (server/notify) tells of it. */
export interface EndedRun {
  runId: string;
  /** Null for a run that failed before it had a session (its folder or runner gone). */
  sessionId: string | null;
  /** The routine's owner (a person's id), null for the token's owner. */
  ownerId: string | null;
  routine: string;
  failed: boolean;
  summary?: string;
}

/** How often a bridge looks whether its routines' running sessions have ended. */
const RUN_WATCH_MS = 1_000;
/** Statuses of a turn that has not ended yet. */
const UNFINISHED = new Set(["running", "waiting"]);

export interface RoutineInput {
  name: string;
  prompt: string;
  workspace: string;
  runner?: string | null;
  isolation?: "worktree" | "none";
  model?: string | null;
  mode?: "default" | "plan";
  schedule?: string | null;
  budget_usd?: number | null;
}

/** How a run's session comes to be: where routines meet sessions and turns (wired in server/bridge/parts.ts). */
export interface RoutineSessions {
  /** A new session for a run; throws (e.g. `workspace:not_found`) when its folder or runner is gone. */
  create(input: {
    workspace: string;
    runner: string | null;
    isolation: "worktree" | "none";
    title: string;
    model: string | null;
    mode: "default" | "plan";
    budgetUsd: number | null;
    ownerId: string | null;
  }): Promise<string>;
  prompt(sessionId: string, text: string): Promise<void>;
}

export interface RoutineDeps {
  db: store.Db;
  sessions: RoutineSessions;
}

/**
 * Routines: saved prompts that run on a schedule or when fired with their own token. Each run is
 * a new session. The store arbitrates (server/store/routines.ts): one run at a time per routine,
 * one queued behind it, and one bridge per scheduled slot, so every bridge may schedule and watch.
 */
export class Routines {
  private readonly scheduler = new Scheduler((id, slot) => void this.fireScheduled(id, slot));
  private syncTimer: NodeJS.Timeout | undefined;
  private watchTimer: NodeJS.Timeout | undefined;
  private watching = false;
  private readonly ended = new Set<(run: EndedRun) => void>();

  constructor(private readonly deps: RoutineDeps) {}

  async start(): Promise<void> {
    await this.syncSchedules();
    this.syncTimer = setInterval(() => void this.syncSchedules(), SCHEDULE_SYNC_MS);
    this.watchTimer = setInterval(() => void this.watchRuns(), RUN_WATCH_MS);
  }

  stop(): void {
    clearInterval(this.syncTimer);
    clearInterval(this.watchTimer);
    this.scheduler.stop();
  }

  /** Hears each run's end, once across the bridges (the one whose store write ended it tells). */
  onEnded(listener: (run: EndedRun) => void): void {
    this.ended.add(listener);
  }

  async create(input: RoutineInput, ownerId: string | null): Promise<{ routine: RoutineView; token: string }> {
    const token = `wlr_${randomBytes(24).toString("base64url")}`;
    const row = await store.createRoutine(this.deps.db, {
      runner: null,
      isolation: "worktree",
      model: null,
      mode: "default",
      schedule: null,
      budgetUsd: null,
      ...dataOf(input),
      name: input.name,
      prompt: input.prompt,
      workspace: input.workspace,
      tokenHash: hashToken(token),
      ownerId,
    });
    await this.syncSchedules();
    return { routine: toView(row), token };
  }

  async list(ownerId?: string): Promise<RoutineView[]> {
    return (await store.listRoutines(this.deps.db, ownerId)).map(toView);
  }

  async get(id: string, ownerId?: string): Promise<RoutineView> {
    return toView(await this.row(id, ownerId));
  }

  async update(id: string, patch: Partial<RoutineInput>, ownerId?: string): Promise<RoutineView> {
    await this.row(id, ownerId);
    const row = await store.updateRoutine(this.deps.db, id, dataOf(patch));
    await this.syncSchedules();
    return toView(row);
  }

  async remove(id: string, ownerId?: string): Promise<void> {
    await this.row(id, ownerId);
    await store.deleteRoutine(this.deps.db, id);
    await this.syncSchedules();
  }

  async runs(id: string, ownerId?: string): Promise<RoutineRunView[]> {
    await this.row(id, ownerId);
    return (await store.listRoutineRuns(this.deps.db, id)).map(toRunView);
  }

  /** The routine a bearer token fires, or null: the token is good for that routine's fire route only. */
  async routineOfToken(token: string): Promise<string | null> {
    if (!token.startsWith("wlr_")) return null;
    const row = await store.findRoutineByTokenHash(this.deps.db, hashToken(token));
    if (!row || !timingSafeEqual(Buffer.from(row.tokenHash), Buffer.from(hashToken(token)))) return null;
    return row.id;
  }

  /** Starts a run now, or queues one behind the running one (once). */
  async fire(
    id: string,
    body: unknown,
    ownerId?: string,
  ): Promise<{ run_id: string; session_id?: string; queued?: true }> {
    const routine = await this.row(id, ownerId);
    const input = body === undefined ? null : JSON.stringify(body, null, 2);
    const { claim, run } = await store.claimRoutineRun(this.deps.db, { routineId: id, trigger: "fire", input });
    if (!run) throw new WorldlineError("routine:busy", "The routine is running and a run is already queued.");
    if (claim !== "running") return { run_id: run.id, queued: true };
    const sessionId = await this.startRun(routine, run);
    return sessionId ? { run_id: run.id, session_id: sessionId } : { run_id: run.id };
  }

  private async fireScheduled(id: string, slot: string): Promise<void> {
    try {
      const routine = await store.getRoutine(this.deps.db, id);
      if (!routine?.schedule) return;
      const claimed = await store.claimRoutineRun(this.deps.db, {
        routineId: id,
        trigger: "schedule",
        input: null,
        slot,
      });
      if (claimed.claim === "running" && claimed.run) await this.startRun(routine, claimed.run);
    } catch (error) {
      // The next slot tries again; a store outage must not stop the scheduler.
      console.error(`[worldline] routine ${id}: the scheduled run at ${slot} failed to start: ${errorMessage(error)}`);
    }
  }

  /** The run's session and its prompt; a folder or runner that is gone ends the run failed, with why. */
  private async startRun(routine: store.RoutineRow, run: store.RoutineRunRow): Promise<string | null> {
    let sessionId: string;
    try {
      sessionId = await this.deps.sessions.create({
        workspace: routine.workspace,
        runner: routine.runner,
        isolation: routine.isolation === "none" ? "none" : "worktree",
        title: `${routine.name} (${run.trigger})`,
        model: routine.model,
        mode: routine.mode === "plan" ? "plan" : "default",
        budgetUsd: routine.budgetUsd,
        ownerId: routine.ownerId,
      });
    } catch (error) {
      await this.endRun(run, { status: "failed", error: errorMessage(error) });
      return null;
    }
    await store.setRunSession(this.deps.db, run.id, sessionId);
    const text = run.input ? `${routine.prompt}\n\n\`\`\`json\n${run.input}\n\`\`\`` : routine.prompt;
    try {
      await this.deps.sessions.prompt(sessionId, text);
    } catch (error) {
      await this.endRun(run, { status: "failed", error: errorMessage(error) });
    }
    return sessionId;
  }

  /** Ends runs whose session's turns have all ended (on whichever bridge ran them). */
  private async watchRuns(): Promise<void> {
    if (this.watching) return;
    this.watching = true;
    try {
      for (const run of await store.activeRoutineRuns(this.deps.db)) {
        const statuses = (await store.sessionTurnStatuses(this.deps.db, run.sessionId as string)).map((t) => t.status);
        if (statuses.length === 0 || statuses.some((status) => UNFINISHED.has(status))) continue;
        const usage = await store.sessionUsage(this.deps.db, run.sessionId as string);
        await this.endRun(run, { status: statuses[0], costUsd: usage.cost_usd });
      }
    } catch (error) {
      console.error(`[worldline] routines: checking running runs failed: ${errorMessage(error)}`);
    } finally {
      this.watching = false;
    }
  }

  private async endRun(
    run: store.RoutineRunRow,
    end: { status: string; error?: string; costUsd?: number | null },
  ): Promise<void> {
    if (!(await store.endRoutineRun(this.deps.db, run.id, end))) return;
    const routine = await store.getRoutine(this.deps.db, run.routineId);
    if (routine) {
      const told: EndedRun = {
        runId: run.id,
        sessionId: run.sessionId,
        ownerId: routine.ownerId,
        routine: routine.name,
        failed: FAILED.has(end.status),
        ...(end.error ? { summary: end.error } : {}),
      };
      for (const listener of this.ended) listener(told);
    }
    const next = await store.promoteQueuedRun(this.deps.db, run.routineId);
    if (next && routine) await this.startRun(routine, next);
  }

  private async syncSchedules(): Promise<void> {
    try {
      this.scheduler.sync(await store.scheduledRoutines(this.deps.db));
    } catch (error) {
      console.error(`[worldline] routines: reading schedules failed: ${errorMessage(error)}`);
    }
  }

  /** The routine, if it exists and (on a hub) belongs to `ownerId`; else 404. */
  private async row(id: string, ownerId?: string): Promise<store.RoutineRow> {
    const row = await store.getRoutine(this.deps.db, id);
    if (!row || (ownerId !== undefined && row.ownerId !== ownerId)) {
      throw new WorldlineError("routine:not_found", `No routine with id "${id}".`);
    }
    return row;
  }
}

function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

function dataOf(input: Partial<RoutineInput>): Partial<store.RoutineData> {
  const data: Partial<store.RoutineData> = {};
  if (input.name !== undefined) data.name = input.name;
  if (input.prompt !== undefined) data.prompt = input.prompt;
  if (input.workspace !== undefined) data.workspace = input.workspace;
  if (input.runner !== undefined) data.runner = input.runner;
  if (input.isolation !== undefined) data.isolation = input.isolation;
  if (input.model !== undefined) data.model = input.model;
  if (input.mode !== undefined) data.mode = input.mode;
  if (input.schedule !== undefined) data.schedule = input.schedule === null ? null : checkSchedule(input.schedule);
  if (input.budget_usd !== undefined) data.budgetUsd = input.budget_usd;
  return data;
}

function toView(row: store.RoutineRow): RoutineView {
  return {
    id: row.id,
    name: row.name,
    prompt: row.prompt,
    workspace: row.workspace,
    runner: row.runner,
    isolation: row.isolation === "none" ? "none" : "worktree",
    model: row.model,
    mode: row.mode === "plan" ? "plan" : "default",
    schedule: row.schedule,
    budget_usd: row.budgetUsd,
    created_at: row.createdAt.toISOString(),
  };
}

function toRunView(row: store.RoutineRunRow): RoutineRunView {
  return {
    id: row.id,
    session_id: row.sessionId,
    trigger: row.trigger === "schedule" ? "schedule" : "fire",
    status: row.status,
    outcome: row.endedAt ? row.status : null,
    error: row.error,
    started_at: row.startedAt.toISOString(),
    ended_at: row.endedAt?.toISOString() ?? null,
    cost_usd: row.costUsd,
  };
}
