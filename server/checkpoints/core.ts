import { randomUUID } from "node:crypto";
import { errorMessage, WorldlineError } from "../errors";
import type { TurnFence } from "../leases";
import type { EventLog, Sessions } from "../sessions";
import * as store from "../store";
import type { FileChange, SnapshotRepo, SnapshotResult } from "./types.ts";

/** What the agent loop calls at every turn and step (structurally the agent's CheckpointPort). */
export interface CheckpointRequest {
  sessionId: string;
  turn: number;
  step: number;
  reason: string;
  historyPosition: number;
}

/** A step's checkpoint from the loop, which knows its session's workspace (no lookup on the step's path). */
export type StepCheckpointRequest = CheckpointRequest & { workspace: string };

/** A snapshot a caller already took, to record as a checkpoint (a rewind's look at the work tree). */
export interface Captured {
  repo: SnapshotRepo;
  result: SnapshotResult;
}

/** A snapshot taken for a checkpoint whose row is not written yet. */
interface Capture {
  repo?: SnapshotRepo;
  result?: SnapshotResult;
  /** Why there is no snapshot. */
  error?: string;
}

/** The runtime side the service needs: whether a turn runs, and rewriting a session's history safely. */
export interface HistoryHost {
  isRunning(sessionId: string): boolean;
  /** Runs `rewrite` on the persisted history while no turn can start; the cached context is re-read afterwards. */
  rewriteHistory(sessionId: string, rewrite: () => Promise<void>): Promise<void>;
}

export interface CheckpointServiceDeps {
  db: store.Db;
  log: EventLog;
  sessions: Sessions;
  /** WORLDLINE_HOME: snapshots and forks live under it. */
  home: string;
  /**
   * The host of a session's workspace (server/host WorkspaceHosts): its shadow repository is kept
   * there, in process on this machine (LocalShadowRepos) or on its runner.
   */
  hosts: { of(runner: string | null): { snapshots(workspace: string): Promise<SnapshotRepo> } };
}

/** Setting keys (server/store settings): the global default and a per-session override. */
export const DMAIL_RESTORES_FILES_SETTING = "checkpoints.dmail_restores_files";
const BASELINE_SETTING = "checkpoints.baseline:";
/**
 * A step's snapshot starts once the step's model request is on its way (the loop asks through
 * `captured`), when a tool needs it, or at the latest this long after its checkpoint is created:
 * the request goes out first, since starting git costs the event loop a little.
 */
const CAPTURE_DELAY_MS = 25;
/** Checkpoints taken while no turn runs: changes since the baseline there are not the agent's. */
const OUTSIDE_CAN_CHANGE = new Set(["turn", "rewind"]);

/** A stored file change: the engine's FileChange plus whether it happened outside the agent. */
export type StoredFileChange = FileChange & { outside?: boolean };

export type CheckpointRow = store.CheckpointRow;

/**
 * Checkpoints of sessions: a row plus a workspace snapshot at every turn, step and turn end,
 * the per-workspace baseline (the state the agent last left) that tells user edits apart,
 * and the queries the timeline needs. Rewind and fork build on it (rewind.ts, fork.ts).
 */
export class CheckpointCore {
  /** Per session: checkpoint work in order (turn-end snapshot before the next turn's first checkpoint). */
  private readonly chains = new Map<string, Promise<unknown>>();
  /** Per session: the number taken last, so the next is taken after it (see allocate). */
  private readonly numbers = new Map<string, Promise<number>>();
  /** Per session: the second number a turn's first checkpoint took, for the checkpoint right after it (see take). */
  private readonly spares = new Map<string, number>();
  /** Per session: the reason of the checkpoint queued last, so a turn end is recorded once. */
  private readonly lastReasons = new Map<string, string>();
  /** Per session: starters of snapshots waiting for their delay (see CAPTURE_DELAY_MS). */
  private readonly waiting = new Map<string, Set<() => void>>();
  /** Per session: settles once the snapshot of the step checkpoint queued last is taken (its row may follow). */
  private readonly captures = new Map<string, Promise<unknown>>();
  /** Per session: its runner (null: this machine), read once; a session never moves. */
  private readonly runners = new Map<string, Promise<string | null>>();
  private host: HistoryHost | undefined;

  constructor(readonly deps: CheckpointServiceDeps) {}

  /** The runtime is built after this service (it takes the port); attach it once it exists. */
  attach(host: HistoryHost): void {
    this.host = host;
  }

  get history(): HistoryHost {
    if (!this.host) throw new WorldlineError("checkpoint:unavailable", "The agent runtime is not attached yet.");
    return this.host;
  }

  /**
   * Frees the per-session bookkeeping once its queued checkpoint work is done (session deleted,
   * or idle). Shadow repos are per
   * workspace and stay.
   */
  async forgetSession(sessionId: string): Promise<void> {
    const chain = this.chains.get(sessionId);
    await this.settled(sessionId);
    // A checkpoint queued meanwhile keeps the bookkeeping: the session is in use again.
    if (this.chains.get(sessionId) !== chain || (this.waiting.get(sessionId)?.size ?? 0) > 0) return;
    this.chains.delete(sessionId);
    this.numbers.delete(sessionId);
    this.spares.delete(sessionId);
    this.lastReasons.delete(sessionId);
    this.waiting.delete(sessionId);
    this.captures.delete(sessionId);
    this.runners.delete(sessionId);
  }

  /** Sessions with bookkeeping held (tests bound it). */
  heldSessions(): number {
    const maps = [this.chains, this.numbers, this.spares, this.lastReasons, this.waiting, this.captures, this.runners];
    return new Set(maps.flatMap((map) => [...map.keys()])).size;
  }

  /** The shadow repository of a session's workspace, through its host. */
  async repo(sessionId: string, workspace: string): Promise<SnapshotRepo> {
    return this.deps.hosts.of(await this.runnerOf(sessionId)).snapshots(workspace);
  }

  private runnerOf(sessionId: string): Promise<string | null> {
    let runner = this.runners.get(sessionId);
    if (!runner) {
      runner = store.getSession(this.deps.db, sessionId).then((session) => session?.runner ?? null);
      runner.catch(() => this.runners.delete(sessionId));
      this.runners.set(sessionId, runner);
    }
    return runner;
  }

  /** Runs `work` after every earlier checkpoint job of the session. */
  serial<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.chains.get(sessionId) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(work); // the previous operation's caller got its error
    this.chains.set(
      sessionId,
      // The chain waits for each operation to end, not to succeed.
      next.catch(() => undefined),
    );
    return next;
  }

  /** Waits for pending checkpoint jobs (a turn-end snapshot) of the session. */
  async settled(sessionId: string): Promise<void> {
    this.startWaiting(sessionId);
    await this.chains.get(sessionId);
  }

  /**
   * Waits until every step checkpoint created so far has its snapshot, not its row: what a tool
   * needs before it may write (the row, the diffs and the baseline follow behind it).
   */
  async captured(sessionId: string): Promise<void> {
    this.startWaiting(sessionId);
    await this.captures.get(sessionId);
  }

  private startWaiting(sessionId: string): void {
    for (const start of this.waiting.get(sessionId) ?? []) start();
  }

  /** Waits for the pending checkpoint work of every session (shutdown). */
  async settledAll(): Promise<void> {
    await Promise.all([...this.chains.keys()].map((sessionId) => this.settled(sessionId)));
  }

  /**
   * The port's `create`: answers with the checkpoint's id and number at once, and queues the
   * snapshot and the row. The model call of the step overlaps the snapshot; tools wait for it
   * (`captured`, through the port), so a snapshot never sees a tool's writes, but not for the
   * row, the diffs and the baseline written after it. Measured on 2 shared cores: two snapshots
   * (~25 ms each) sat between a prompt and the model request. Never throws for snapshot trouble.
   */
  async create(input: StepCheckpointRequest): Promise<{ id: string; number: number }> {
    const { workspace, ...request } = input;
    const id = `cp_${randomUUID()}`;
    const fence = this.deps.log.fenceOf(input.sessionId);
    const number = this.allocate(input.sessionId, input.reason);
    // The loop appends the marker and the checkpoint.created event for its own checkpoints.
    const delayed = this.delay(input.sessionId);
    const captured = this.serial(input.sessionId, async () => {
      await delayed;
      return this.capture(request, workspace);
    });
    this.captures.set(
      input.sessionId,
      // Waiters need the capture over, not successful; its caller got any error.
      captured.catch(() => undefined),
    );
    // The loop announces the checkpoint at once, so its row must follow: the durable writer waits out
    // a store outage (the reads before the insert too; the insert is idempotent by id).
    void this.serial(input.sessionId, async () => {
      const capture = await captured;
      const taken = await number;
      // A tool waiting on the capture (`captured`) starts first and the row is written while it
      // runs: the row's queries, compiled by Prisma on first use, held the event loop between the
      // snapshot and the shell command it was taken for (print mode, a shell call: the step
      // 54-72 ms -> 36-51 ms).
      await new Promise((resolve) => setImmediate(resolve));
      return store.durably(() => this.store(request, capture, { announce: false, id, number: taken, fence }));
    }).catch((error: unknown) => notSaved(input.sessionId, fence, error));
    return { id, number: await number };
  }

  /** Resolves after CAPTURE_DELAY_MS, or earlier when `settled` asks for the session's snapshots. */
  private delay(sessionId: string): Promise<void> {
    return new Promise((resolve) => {
      const starters = this.waiting.get(sessionId) ?? new Set<() => void>();
      this.waiting.set(sessionId, starters);
      const start = () => {
        clearTimeout(timer);
        starters.delete(start);
        resolve();
      };
      const timer = setTimeout(start, CAPTURE_DELAY_MS);
      starters.add(start);
    });
  }

  /**
   * Takes checkpoint numbers from the store (an atomic counter on the session), in queue order:
   * any bridge can take the next one and none is reused. Taken before the row
   * exists, so the model is told the number at once; the durable writer waits out a store outage.
   */
  private allocate(sessionId: string, reason: string): Promise<number> {
    const previous = this.numbers.get(sessionId) ?? Promise.resolve(0);
    const next = previous
      .catch(() => 0) // a failed take before this one does not fail this one
      .then(() => this.take(sessionId, reason));
    this.numbers.set(sessionId, next);
    void next.catch(() => undefined); // the caller gets the error; this copy only orders the queue
    this.lastReasons.set(sessionId, reason);
    return next;
  }

  /**
   * A turn's first checkpoint (step 0) takes two numbers in one statement: the loop creates the
   * next one (step 1) right after it, before the model request, so a prompt waits on one database
   * round trip less (~0.6 ms). The spare serves only the checkpoint right after it in the same turn
   * (a new turn drops an unused one: a gap, never a number out of order).
   */
  private async take(sessionId: string, reason: string): Promise<number> {
    const spare = this.spares.get(sessionId);
    this.spares.delete(sessionId);
    if (spare !== undefined && reason !== "turn") return spare;
    const count = reason === "turn" ? 2 : 1;
    const first = await store.durably(() => store.takeCheckpointNumber(this.deps.db, sessionId, count));
    if (count === 2) this.spares.set(sessionId, first + 1);
    return first;
  }

  /**
   * Snapshots the workspace (unless `captured` is one just taken) and writes the checkpoint row
   * (callers serialize); announces it with an event unless told not to.
   */
  async record(
    input: CheckpointRequest,
    options: { announce?: boolean; id?: string; number?: number; fence?: TurnFence; captured?: Captured } = {},
  ): Promise<CheckpointRow> {
    const { captured, ...rest } = options;
    const number = rest.number ?? (await this.allocate(input.sessionId, input.reason));
    const session = await this.deps.sessions.get(input.sessionId);
    const capture = captured ?? (await this.capture(input, session.workspace.path));
    return this.store(input, capture, { ...rest, number });
  }

  /** The snapshot alone. A failure is kept as the reason there is none: it must never fail the turn. */
  private async capture(input: CheckpointRequest, workspace: string): Promise<Capture> {
    try {
      const repo = await this.repo(input.sessionId, workspace);
      const result = await repo.snapshot({
        message: `${input.reason} ${input.sessionId} turn ${input.turn} step ${input.step}`,
        changes: false, // store() diffs from the previous checkpoint's snapshot, not the repository's
      });
      return { repo, result };
    } catch (error) {
      return { error: errorMessage(error) };
    }
  }

  /** The row of a captured snapshot: what changed since the previous checkpoint, and the new baseline. */
  private async store(
    input: CheckpointRequest,
    capture: Capture,
    options: { announce?: boolean; id?: string; number: number; fence?: TurnFence },
  ): Promise<CheckpointRow> {
    const previous = await store.lastCheckpoint(this.deps.db, input.sessionId);
    const snapshot = capture.result?.commit ?? null;
    let files: StoredFileChange[] = [];
    let note = capture.error === undefined ? null : `No snapshot of the files: ${capture.error}`;
    try {
      if (capture.repo && capture.result) {
        files = await this.changesSince(input.reason, capture.repo, previous?.snapshot, capture.result.commit);
        await this.setBaseline(capture.repo, capture.result.commit);
        const skipped = capture.result.skipped;
        if (skipped.length > 0) {
          const shown = skipped.slice(0, 5).map((entry) => `${entry.path} (${entry.reason})`);
          const more = skipped.length > shown.length ? ` and ${skipped.length - shown.length} more` : "";
          note = `Not captured: ${shown.join(", ")}${more}. A rewind leaves these paths alone.`;
        }
      }
    } catch (error) {
      // The snapshot exists but its diff failed: the row still marks the conversation position.
      note = `No list of changed files: ${errorMessage(error)}`;
    }
    // One id for every try: a retry of an insert that went through finds its row instead of clashing.
    const id = options.id ?? store.newId();
    const row = await store.durably(() =>
      store.createCheckpoint(
        this.deps.db,
        {
          id,
          number: options.number,
          sessionId: input.sessionId,
          turn: input.turn,
          step: input.step,
          reason: input.reason,
          historyPosition: input.historyPosition,
          snapshot,
          filesChanged: JSON.stringify(files),
          note,
        },
        options.fence,
      ),
    );
    if (options.announce === false) return row;
    await this.deps.log.open(input.sessionId);
    this.deps.log.append(input.sessionId, {
      type: "checkpoint.created",
      payload: { checkpointId: row.id, number: row.number, turn: row.turn, step: row.step, reason: row.reason },
    });
    return row;
  }

  /**
   * The files changed since the previous checkpoint. Between turns (and before a rewind), what
   * differs from the state the agent last left (the baseline) was changed by someone else
   * (editor, terminal): marked `outside`. Within a turn, changes are the agent's.
   */
  private async changesSince(
    reason: string,
    repo: SnapshotRepo,
    previous: string | null | undefined,
    snapshot: string,
  ): Promise<StoredFileChange[]> {
    if (!previous || previous === snapshot) return [];
    const outside = new Set<string>();
    const baseline = OUTSIDE_CAN_CHANGE.has(reason) ? await this.baseline(repo) : undefined;
    if (baseline && baseline !== snapshot) {
      for (const change of (await repo.diff(baseline, snapshot)).files) {
        outside.add(change.path);
        if (change.oldPath) outside.add(change.oldPath);
      }
    }
    return (await repo.diff(previous, snapshot)).files.map((change) =>
      outside.has(change.path) ? { ...change, outside: true } : change,
    );
  }

  /**
   * The port's `turnEnded`: a snapshot when each turn ends, recorded as a `turn_end` checkpoint
   * (it is the baseline for telling the user's later edits apart, and it shows what the turn's
   * last step changed). The runtime awaits it before appending `turn.completed`, so the
   * `checkpoint.created` event is part of the turn: another process that starts its turn once
   * this one completed can't take the same seq. Off the path to the first token (the turn is done).
   * Never throws.
   */
  async turnEnded(sessionId: string): Promise<void> {
    const queued = this.lastReasons.get(sessionId);
    if (queued === undefined || queued === "turn_end") return;
    const number = this.allocate(sessionId, "turn_end");
    const fence = this.deps.log.fenceOf(sessionId);
    // The turn's model calls are over: delayed step snapshots need not wait any longer.
    this.startWaiting(sessionId);
    await this.serial(sessionId, async () => {
      const taken = await number;
      const id = store.newId(); // one row whatever the tries (a retry after a lost answer finds it)
      await store.durably(async () => {
        const last = await store.lastCheckpoint(this.deps.db, sessionId);
        const position = (await store.readHistory(this.deps.db, sessionId)).length;
        const turn = { turn: last?.turn ?? 0, step: (last?.step ?? 0) + 1 };
        const request = { sessionId, ...turn, reason: "turn_end", historyPosition: position };
        await this.record(request, { number: taken, id, fence });
      });
    }).catch((error: unknown) => notSaved(sessionId, fence, error));
  }

  async baseline(repo: SnapshotRepo): Promise<string | undefined> {
    const value = await store.getSetting(this.deps.db, BASELINE_SETTING + repo.key);
    return typeof value === "string" ? value : undefined;
  }

  async setBaseline(repo: SnapshotRepo, commit: string): Promise<void> {
    await store.putSetting(this.deps.db, BASELINE_SETTING + repo.key, commit);
  }

  /** A checkpoint of this session by id or number; `checkpoint:not_found` otherwise. */
  async find(sessionId: string, ref: string | number): Promise<CheckpointRow> {
    const row =
      typeof ref === "number" || /^\d+$/.test(ref)
        ? await store.getCheckpointByNumber(this.deps.db, sessionId, Number(ref))
        : await store.getCheckpoint(this.deps.db, ref);
    if (!row || row.sessionId !== sessionId) {
      throw new WorldlineError("checkpoint:not_found", `No checkpoint ${JSON.stringify(ref)} in this session.`);
    }
    return row;
  }
}

/**
 * A checkpoint whose row could not be written: refused on the turn's claim (the turn is told and
 * stops), or failed otherwise (the durable writer gave up, or the session was deleted meanwhile);
 * the marker in the history still works for D-Mail. The announced checkpoint's missing row is
 * written, without a snapshot, by the next start check or `worldline doctor` (server/store/consistency.ts).
 */
function notSaved(sessionId: string, fence: TurnFence | undefined, error: unknown): void {
  if (fence && store.isFenced(error)) return fence.lose(error);
  console.warn(
    `[worldline] checkpoint of ${sessionId} was not saved (${errorMessage(error)}); ` +
      "the next start check or `worldline doctor` gives it a row without a snapshot",
  );
}

export function noSnapshot(row: CheckpointRow): WorldlineError {
  return new WorldlineError(
    "checkpoint:invalid",
    `Checkpoint #${row.number} has no snapshot of the files${row.note ? ` (${row.note})` : ""}; only the conversation can be rewound.`,
  );
}

export function storedFiles(row: CheckpointRow): StoredFileChange[] {
  try {
    return JSON.parse(row.filesChanged) as StoredFileChange[];
  } catch {
    // a corrupt row lists no files; the snapshot itself is intact
    return [];
  }
}
