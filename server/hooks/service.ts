import path from "node:path";
import type { HookEvent, HookEventFields, HookPort, HookVerdict, TurnHooks, TurnEmitter } from "../agent";
import { errorMessage } from "../errors";
import type { ToolHost } from "../host";
import type { HooksFileView, SessionEvent } from "../protocol";
import { readTextOrNull } from "../stat-or-null";
import * as store from "../store";
import { matchesTool, parseHooksFile, type HookEntry, type HooksFile } from "./config";
import { interpret, type HookAnswer } from "./answer";
import { runHookCommand } from "./run";
import { HookTrust } from "./trust";

/** A workspace's hooks files, in the order their hooks run; `.claude/*` so a team's Claude Code hooks work unchanged. */
const WORKSPACE_FILES = [".worldline/hooks.json", ".claude/settings.json", ".claude/settings.local.json"];

/** SessionEnd hooks run as the session is freed: none may hold that up longer than this. */
const SESSION_END_LIMIT_MS = 60_000;

export interface HookServiceDeps {
  db: store.Db;
  /** WORLDLINE_HOME: its `hooks.json` is the owner's, trusted. */
  home: string;
  /** Appends an event to a session's log outside a turn (SessionEnd). */
  append(sessionId: string, event: SessionEvent): void;
}

interface ReadFile extends HooksFile {
  source: "workspace" | "home";
  trusted: boolean;
}

/** Where a session's hooks run, kept for SessionEnd (which comes after its last turn). */
interface SessionPlace {
  workspace: string;
  host: ToolHost;
}

/**
 * Lifecycle hooks: reads the hooks files of a session's workspace and of
 * WORLDLINE_HOME afresh each turn (a changed file is parsed again, by its hash), runs the
 * trusted ones on the session's host, and records each run in the transcript and the audit.
 */
export class HookService implements HookPort {
  readonly trust: HookTrust;
  private readonly parsed = new Map<string, HooksFile>();
  /** Per session, the `file@sha` whose notice (untrusted, broken) was already shown. */
  private readonly noticed = new Map<string, Set<string>>();
  private readonly places = new Map<string, SessionPlace>();
  private readonly started = new Set<string>();

  constructor(private readonly deps: HookServiceDeps) {
    this.trust = new HookTrust(deps.db);
  }

  /** The session's hooks files, for the session page and `GET /sessions/:id/hooks`. */
  async list(workspace: string, host: ToolHost): Promise<HooksFileView[]> {
    const files = await this.read(workspace, host);
    return files.map((file) => ({
      file: file.file,
      sha256: file.sha256,
      trusted: file.trusted,
      source: file.source,
      events: [...new Set(file.entries.map((entry) => entry.event))],
      commands: file.entries.map(({ event, matcher, command }) => ({ event, matcher, command })),
      ...(file.error ? { error: file.error } : {}),
    }));
  }

  async forTurn(input: {
    sessionId: string;
    workspace: string;
    host: ToolHost;
    emit: TurnEmitter;
    signal: AbortSignal;
  }): Promise<TurnHooks | undefined> {
    const { sessionId, workspace, host, emit } = input;
    this.places.set(sessionId, { workspace, host });
    const files = await this.read(workspace, host);
    if (files.length === 0) return undefined;
    const notice = (text: string) =>
      emit.event({ type: "notice", payload: { level: "warning", text, turnId: emit.turnId } });
    for (const file of files) {
      if (file.error) this.noticeOnce(sessionId, file, notice, file.error);
      else if (!file.trusted && file.entries.length) {
        this.noticeOnce(
          sessionId,
          file,
          notice,
          `The hooks in ${file.file} do not run until a person trusts them (the session page shows its commands).`,
        );
      }
    }
    const entries = files.filter((file) => file.trusted && !file.error).flatMap((file) => file.entries);
    if (entries.length === 0) return undefined;
    const place = { sessionId, workspace, host, signal: input.signal };
    return {
      run: (event, fields) => {
        // SessionStart once per session in this process: its first turn here (a new session, or one resumed after a restart).
        if (event === "SessionStart") {
          if (this.started.has(sessionId)) return Promise.resolve({ context: [], feedback: [] });
          this.started.add(sessionId);
        }
        return this.runEvent(entries, event, fields ?? {}, place, emit);
      },
    };
  }

  /** The session ended (deleted, or idle and unwatched): its SessionEnd hooks run, once. */
  async forgetSession(sessionId: string, why: "deleted" | "idle"): Promise<void> {
    const place = this.places.get(sessionId);
    this.places.delete(sessionId);
    this.noticed.delete(sessionId);
    this.started.delete(sessionId);
    if (!place) return;
    const files = await this.read(place.workspace, place.host).catch(() => []);
    const entries = files.filter((file) => file.trusted && !file.error).flatMap((file) => file.entries);
    const emit: TurnEmitter = { turnId: "", event: (event) => this.deps.append(sessionId, event) };
    const ended = { ...place, sessionId, signal: AbortSignal.timeout(SESSION_END_LIMIT_MS) };
    await this.runEvent(entries, "SessionEnd", { reason: why }, ended, emit);
  }

  private noticeOnce(sessionId: string, file: HooksFile, notice: (text: string) => void, text: string): void {
    let seen = this.noticed.get(sessionId);
    if (!seen) this.noticed.set(sessionId, (seen = new Set()));
    const key = `${file.file}@${file.sha256}`;
    if (seen.has(key)) return;
    seen.add(key);
    notice(text);
  }

  /** The home file (read here) and the workspace's (read on its host), each parsed once per content. */
  private async read(workspace: string, host: ToolHost): Promise<ReadFile[]> {
    const homeFile = path.join(this.deps.home, "hooks.json");
    const texts = await Promise.all([
      readTextOrNull(homeFile).then((text) => ({ file: homeFile, text: text ?? undefined, source: "home" as const })),
      ...WORKSPACE_FILES.map(async (relative) => {
        const file = path.join(workspace, relative);
        return { file, text: await host.readText(file).catch(() => undefined), source: "workspace" as const };
      }),
    ]);
    const files: ReadFile[] = [];
    for (const { file, text, source } of texts) {
      if (text === undefined) continue;
      const parsed = this.parse(file, text);
      // A settings file without hooks is not a hooks file: nothing to show or trust.
      if (!parsed.error && parsed.entries.length === 0) continue;
      const trusted = source === "home" || (await this.trust.trusted(file, parsed.sha256));
      files.push({ ...parsed, source, trusted });
    }
    return files;
  }

  private parse(file: string, text: string): HooksFile {
    const fresh = parseHooksFile(file, text);
    const known = this.parsed.get(file);
    if (known?.sha256 === fresh.sha256) return known;
    this.parsed.set(file, fresh);
    return fresh;
  }

  private async runEvent(
    all: HookEntry[],
    event: HookEvent,
    fields: HookEventFields,
    place: { sessionId: string; workspace: string; host: ToolHost; signal: AbortSignal },
    emit: TurnEmitter,
  ): Promise<HookVerdict> {
    const entries = uniqueCommands(all.filter((entry) => entry.event === event && fires(entry, event, fields)));
    const verdict: HookVerdict = { context: [], feedback: [] };
    if (entries.length === 0) return verdict;
    const { toolCallId, ...eventFields } = fields;
    const stdin = JSON.stringify({
      session_id: place.sessionId,
      cwd: place.workspace,
      hook_event_name: event,
      ...eventFields,
    });
    // Hooks of one event run together, as in Claude Code; their answers are combined below.
    const answers = await Promise.all(
      entries.map(async (entry) => {
        const result = await runHookCommand(place.host, {
          command: entry.command,
          cwd: place.workspace,
          stdin,
          timeoutMs: entry.timeoutMs,
          signal: place.signal,
        });
        const answer = interpret(event, result);
        this.record(place.sessionId, emit, entry, { ...answer, ms: result.ms, exitCode: result.exitCode }, toolCallId);
        return { entry, answer };
      }),
    );
    for (const { entry, answer } of answers) {
      if (answer.block !== undefined) verdict.block ??= answer.block;
      if (answer.approve) verdict.approve ??= entry.command;
      verdict.context.push(...answer.context);
      verdict.feedback.push(...answer.feedback);
    }
    return verdict;
  }

  /** The transcript line and the audit row of one run. */
  private record(
    sessionId: string,
    emit: TurnEmitter,
    entry: HookEntry,
    run: HookAnswer & { ms: number; exitCode: number | null },
    toolCallId: string | undefined,
  ): void {
    emit.event({
      type: "hook.ran",
      payload: {
        ...(emit.turnId ? { turnId: emit.turnId } : {}),
        ...(toolCallId ? { toolCallId } : {}),
        event: entry.event,
        command: entry.command,
        file: entry.file,
        exitCode: run.exitCode,
        ms: Math.round(run.ms),
        outcome: run.outcome,
        ...(run.reason ? { reason: run.reason.slice(0, 2_000) } : {}),
      },
    });
    const home = entry.file === path.join(this.deps.home, "hooks.json");
    store
      .recordCommand(this.deps.db, {
        command: entry.command,
        cwd: path.dirname(entry.file),
        riskLevel: "medium",
        actionType: `hook:${entry.event}`,
        approved: true,
        decidedBy: home ? "home hooks file" : `trusted hooks file ${entry.file}`,
        exitCode: run.exitCode,
        durationMs: run.ms,
        sessionId,
        ...(emit.turnId ? { turnId: emit.turnId } : {}),
      })
      // The hook ran either way; a failing audit store is the bridge's to report.
      .catch((error: unknown) => console.error(`audit record of a hook failed: ${errorMessage(error)}`));
  }
}

/**
 * Tool events match the tool's name; SessionStart matches its source, Notification its type (as in
 * Claude Code); the other events run every entry.
 */
function fires(entry: HookEntry, event: HookEvent, fields: HookEventFields): boolean {
  if (event === "PreToolUse" || event === "PostToolUse") return matchesTool(entry.matcher, fields.tool_name ?? "");
  if (event === "SessionStart") return matchesTool(entry.matcher, fields.source ?? "");
  if (event === "Notification") return matchesTool(entry.matcher, fields.notification_type ?? "");
  return true;
}

/** The same command twice (a team file and a personal one) runs once, as in Claude Code. */
function uniqueCommands(entries: HookEntry[]): HookEntry[] {
  const seen = new Set<string>();
  return entries.filter((entry) => !seen.has(entry.command) && Boolean(seen.add(entry.command)));
}
