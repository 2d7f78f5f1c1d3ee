import type { ToolHost } from "../host";
import type { FileDiagnostic } from "../tools";
import type { LanguageServer } from "./language-server";
import { languageOf, serverSpec } from "./servers";

/** The longest an edit's result waits for its diagnostics (a cold server usually misses it, a warm one rarely). */
export const EDIT_WAIT_LIMIT_MS = 2_000;
/** A server that failed is not started again for this long: a crashing server must not cost every edit a start. */
const RESTART_AFTER_MS = 60_000;

/** What Settings shows for one language server of one workspace. */
export interface ServerStatus {
  workspace: string;
  language: string;
  state: "running" | "unavailable";
  /** Why it gives no diagnostics (missing, crashed, slow); absent while it works. */
  note?: string;
  at: string;
}

interface Running {
  server: LanguageServer;
  sessions: Set<string>;
}

/**
 * Language-server diagnostics after edits: one server per workspace and language,
 * started on a file's first edit, kept warm, stopped when the last session using it is freed.
 */
export class DiagnosticsService {
  private readonly running = new Map<string, Running>();
  private readonly statuses = new Map<string, ServerStatus>();
  private readonly failedAt = new Map<string, number>();

  /** The file's errors after an edit wrote `text`, or undefined (no server for it, or none in time). */
  async afterEdit(
    place: { sessionId: string; workspace: string; host: ToolHost },
    file: string,
    text: string,
  ): Promise<FileDiagnostic[] | undefined> {
    const language = languageOf(file);
    if (!language) return undefined;
    const key = serverKey(place.host.runner, place.workspace, language);
    const note = (why: string) => this.note(key, place.workspace, language, why);
    const started = performance.now();
    const running = await this.serverFor(key, place, language);
    if (!running) return undefined;
    running.sessions.add(place.sessionId);
    const limit = Math.max(0, EDIT_WAIT_LIMIT_MS - (performance.now() - started));
    const errors = await running.server.errorsAfterChange(file, text, limit);
    if (running.server.failure) {
      this.retire(key, running, running.server.failure);
      return undefined;
    }
    if (errors === undefined)
      note(
        `slow: no diagnostics within ${EDIT_WAIT_LIMIT_MS / 1000} s (a server still starting up misses its first edits)`,
      );
    else this.note(key, place.workspace, language);
    return errors;
  }

  /** The errors last published for a file (the editor's squiggles); undefined when no server has it open. */
  lastErrors(workspace: string, file: string, runner: string | null = null): FileDiagnostic[] | undefined {
    const language = languageOf(file);
    return language ? this.running.get(serverKey(runner, workspace, language))?.server.lastErrors(file) : undefined;
  }

  status(): ServerStatus[] {
    return [...this.statuses.values()];
  }

  /** The session was freed (idle or deleted): servers no other session uses stop. */
  async forgetSession(sessionId: string): Promise<void> {
    const stopping: Promise<void>[] = [];
    for (const [key, running] of this.running) {
      running.sessions.delete(sessionId);
      if (running.sessions.size > 0) continue;
      this.running.delete(key);
      this.statuses.delete(key);
      stopping.push(running.server.stop());
    }
    await Promise.all(stopping);
  }

  async close(): Promise<void> {
    await Promise.all([...this.running.values()].map((running) => running.server.stop()));
    this.running.clear();
  }

  private async serverFor(
    key: string,
    place: { workspace: string; host: ToolHost },
    language: "typescript" | "python",
  ): Promise<Running | undefined> {
    const known = this.running.get(key);
    if (known) return known;
    if (Date.now() - (this.failedAt.get(key) ?? 0) < RESTART_AFTER_MS) return undefined;
    const spec = await serverSpec(language, place.workspace, place.host);
    if ("missing" in spec) {
      this.note(key, place.workspace, language, spec.missing);
      return undefined;
    }
    // The LSP client (vscode-jsonrpc and the protocol's types) loads with the first server, not at every start.
    const { LanguageServer: Server } = await import("./language-server");
    const running = { server: Server.start(place.host, place.workspace, spec), sessions: new Set<string>() };
    this.running.set(key, running);
    this.note(key, place.workspace, language);
    return running;
  }

  private retire(key: string, running: Running, why: string): void {
    this.running.delete(key);
    this.failedAt.set(key, Date.now());
    const [, workspace, language] = key.split("\u0000");
    this.note(key, workspace, language, `the server stopped working: ${why}`);
    void running.server.stop();
  }

  private note(key: string, workspace: string, language: string, why?: string): void {
    this.statuses.set(key, {
      workspace,
      language,
      state: why ? "unavailable" : "running",
      ...(why ? { note: why } : {}),
      at: new Date().toISOString(),
    });
  }
}

/** One server per host, workspace and language: a runner's /work/app is not this machine's. */
function serverKey(runner: string | null, workspace: string, language: string): string {
  return `${runner ?? ""}\u0000${workspace}\u0000${language}`;
}
