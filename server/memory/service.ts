import { WorldlineError } from "../errors";
import { CreateMemoryBody, MemorySettings, type MemoryQuery, type MemoryView, type SessionEvent } from "../protocol";
import * as store from "../store";
import { decideMemory, type CompleteText } from "./policy";
import { DIRECT_ANSWER_MIN_COVERAGE, isDirectQuestion, rankMemories } from "./ranking";
import { reflect } from "./reflection";

/** At most this many memories go into one system prompt. */
export const RECALL_LIMIT = 8;
/** Memories this important are recalled even without shared words (standing preferences, lessons). */
export const ALWAYS_RECALL_IMPORTANCE = 4;
/** The recalled section stays small next to the rest of the prompt. */
export const RECALL_MAX_CHARS = 4000;

const SETTINGS_KEY = "memory.settings";
const DEFAULT_SETTINGS: MemorySettings = { auto_memory: true, reflection: false };

export interface Recall {
  memories: MemoryView[];
  /** The system-prompt section ("" when nothing is recalled). */
  section: string;
  /** The prompt is a plain question a recalled memory answers: the turn may skip tool planning. */
  direct: boolean;
}

/**
 * Who reads or writes memories over the API: a named person (`id`, with the sessions they see,
 * null for all), or undefined for the launch token and WORLDLINE_TOKENS, who see every memory.
 */
export interface MemoryReader {
  id: string;
  sessionIds: Set<string> | null;
  admin: boolean;
}

export interface TurnEnd {
  sessionId: string;
  workspace: string;
  turnId: string;
  prompt: string;
  /** The final answer, and a compact transcript of the turn for the critic. */
  answer: string;
  transcript: string;
  outcome: string;
  emit: (event: SessionEvent) => void;
  /** A one-shot model call without tools; absent when no model is configured. */
  complete?: CompleteText;
}

/**
 * Memories in the database: written by the user, the agent's `remember` tool, the post-turn decision or reflection.
 * Each belongs to a person (SECURITY.md, "Memories belong to a person"): the one who stored it over the API, or
 * the owner of the session whose turn stored it. Listing and recall never cross people.
 */
export class MemoryService {
  constructor(private readonly db: store.Db) {}

  async add(
    input: CreateMemoryBody,
    turnId?: string,
    emit?: (event: SessionEvent) => void,
    ownerId: string | null = null,
  ): Promise<MemoryView> {
    const body = CreateMemoryBody.parse(input);
    if (body.scope === "workspace" && !body.workspace)
      throw new WorldlineError("memory:invalid", "A workspace memory needs `workspace` (its folder).");
    if (body.scope === "session" && !body.session_id)
      throw new WorldlineError("memory:invalid", "A session memory needs `session_id`.");
    const row = await store.createMemory(this.db, {
      text: body.text,
      type: body.type,
      scope: body.scope,
      workspace: body.scope === "workspace" ? body.workspace : undefined,
      sessionId: body.scope === "session" ? body.session_id : undefined,
      importance: body.importance,
      source: body.source,
      ownerId,
    });
    const view = toView(row);
    emit?.({
      type: "memory.stored",
      payload: {
        turnId,
        memoryId: view.id,
        text: view.text,
        type: view.type,
        scope: view.scope,
        importance: view.importance,
        source: view.source,
      },
    });
    return view;
  }

  /** The agent's `remember` tool. */
  async remember(
    input: {
      sessionId: string;
      workspace: string;
      turnId: string;
      text: string;
      type: MemoryView["type"];
      scope: MemoryView["scope"];
      importance: number;
    },
    emit: (event: SessionEvent) => void,
  ): Promise<MemoryView> {
    return this.add(
      {
        text: input.text,
        type: input.type,
        scope: input.scope,
        importance: input.importance,
        source: "agent",
        workspace: input.workspace,
        session_id: input.sessionId,
      },
      input.turnId,
      emit,
      await store.sessionOwnerOf(this.db, input.sessionId),
    );
  }

  /** Memories a reader may see: a person's own and the session memories of sessions they see; everything for the launch token. */
  async list(query: MemoryQuery, reader?: MemoryReader): Promise<MemoryView[]> {
    const rows = await store.listMemories(this.db, {
      scope: query.scope,
      type: query.type,
      workspace: query.workspace,
      sessionId: query.session_id,
      readableBy: reader ? { ownerId: reader.id, sessionIds: reader.sessionIds } : undefined,
    });
    const views = rows.map(toView);
    if (!query.q) return views.slice(0, query.limit);
    return rankMemories(query.q, rows)
      .slice(0, query.limit)
      .map((scored) => toView(scored.item));
  }

  /** A person deletes only their own memories (admins any); the launch token any. */
  async remove(id: string, reader?: MemoryReader): Promise<void> {
    const row = await store.findMemory(this.db, id);
    const mine = row && (!reader || reader.admin || row.ownerId === reader.id);
    if (!mine || !(await store.deleteMemory(this.db, id)))
      throw new WorldlineError("memory:not_found", `No memory ${id}.`);
  }

  async settings(): Promise<MemorySettings> {
    const stored = MemorySettings.partial().safeParse(await store.getSetting(this.db, SETTINGS_KEY));
    return { ...DEFAULT_SETTINGS, ...(stored.success ? stored.data : {}) };
  }

  async updateSettings(change: Partial<MemorySettings>): Promise<MemorySettings> {
    const next = { ...(await this.settings()), ...change };
    await store.putSetting(this.db, SETTINGS_KEY, next);
    return next;
  }

  /** What a turn recalls: the session owner's global, workspace and session memories most relevant to the prompt. */
  async recall(input: { sessionId: string; workspace: string; prompt: string }): Promise<Recall> {
    const rows = await this.visibleToTurn(input.sessionId, input.workspace);
    const ranked = rankMemories(input.prompt, rows);
    const chosen = ranked.slice(0, RECALL_LIMIT).map((scored) => scored.item);
    for (const row of rows) {
      if (chosen.length >= RECALL_LIMIT) break;
      if (
        row.importance >= ALWAYS_RECALL_IMPORTANCE &&
        (row.type === "preference" || row.type === "lesson") &&
        !chosen.includes(row)
      )
        chosen.push(row);
    }
    const memories = chosen.map(toView);
    const direct = isDirectQuestion(input.prompt) && (ranked[0]?.coverage ?? 0) >= DIRECT_ANSWER_MIN_COVERAGE;
    return { memories, section: formatSection(memories), direct };
  }

  /** After a turn: the memory decision, then (when on) reflection. Never throws: memory must not fail a turn. */
  async afterTurn(turn: TurnEnd): Promise<void> {
    const settings = await this.settings();
    if (turn.outcome !== "completed") return;
    if (settings.auto_memory) await this.decide(turn).catch((error: unknown) => warn("memory decision", error));
    if (settings.reflection) await this.reflect(turn).catch((error: unknown) => warn("reflection", error));
  }

  private async decide(turn: TurnEnd): Promise<void> {
    const decision = await decideMemory({ prompt: turn.prompt, answer: turn.answer, complete: turn.complete });
    if (!decision) return;
    const known = decision.candidate ? await this.alreadyKnown(turn, decision.candidate.text) : false;
    const keep = decision.candidate !== undefined && !known;
    turn.emit({
      type: "memory.policy_decision",
      payload: {
        turnId: turn.turnId,
        decision: keep ? "store" : "skip",
        via: decision.via,
        reason: known ? "Already remembered." : decision.reason,
        text: decision.candidate?.text,
      },
    });
    if (!keep || !decision.candidate) return;
    const { candidate } = decision;
    await this.add(
      {
        text: candidate.text,
        type: candidate.type,
        scope: candidate.scope,
        importance: candidate.importance,
        source: "policy",
        workspace: turn.workspace,
        session_id: turn.sessionId,
      },
      turn.turnId,
      turn.emit,
      await store.sessionOwnerOf(this.db, turn.sessionId),
    );
  }

  private async reflect(turn: TurnEnd): Promise<void> {
    const outcome = await reflect({ prompt: turn.prompt, transcript: turn.transcript, complete: turn.complete });
    if (!outcome.lesson) {
      turn.emit({
        type: "reflection.completed",
        payload: { turnId: turn.turnId, outcome: outcome.error ? "error" : "skipped", message: outcome.message },
      });
      return;
    }
    const memory = await this.add(
      {
        text: outcome.lesson,
        type: "lesson",
        scope: "workspace",
        importance: outcome.importance,
        source: "reflection",
        workspace: turn.workspace,
      },
      turn.turnId,
      turn.emit,
      await store.sessionOwnerOf(this.db, turn.sessionId),
    );
    turn.emit({
      type: "reflection.completed",
      payload: { turnId: turn.turnId, outcome: "stored", lesson: memory.text, memoryId: memory.id },
    });
  }

  /** The memories a turn of a session may read: its owner's (a session without an owner: those without one). */
  private async visibleToTurn(sessionId: string, workspace: string): Promise<store.MemoryRow[]> {
    const ownerId = await store.sessionOwnerOf(this.db, sessionId);
    return store.listMemories(this.db, { visibleTo: { workspace, sessionId, ownerId } });
  }

  private async alreadyKnown(turn: TurnEnd, text: string): Promise<boolean> {
    const rows = await this.visibleToTurn(turn.sessionId, turn.workspace);
    const normal = normalise(text);
    return rows.some((row) => normalise(row.text) === normal);
  }
}

function formatSection(memories: MemoryView[]): string {
  if (memories.length === 0) return "";
  const lines: string[] = [];
  let used = 0;
  for (const memory of memories) {
    const line = `- [${memory.type}, ${memory.scope}] ${memory.text}`;
    if (used + line.length > RECALL_MAX_CHARS) break;
    used += line.length;
    lines.push(line);
  }
  return lines.join("\n");
}

function toView(row: store.MemoryRow): MemoryView {
  return {
    id: row.id,
    text: row.text,
    type: row.type as MemoryView["type"],
    scope: row.scope as MemoryView["scope"],
    workspace: row.workspace,
    session_id: row.sessionId,
    importance: Math.min(5, Math.max(1, row.importance)),
    source: row.source as MemoryView["source"],
    created_at: row.createdAt.toISOString(),
  };
}

function normalise(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

function warn(what: string, error: unknown): void {
  // Memory is an extra: a failure is logged and the turn's result stands.
  console.warn(`[worldline] ${what} failed:`, error instanceof Error ? error.message : error);
}
