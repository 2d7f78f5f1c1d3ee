import fs from "node:fs";
import path from "node:path";
import * as z from "zod";
import { SessionSummary } from "../protocol";
import { CliError, EXIT_USAGE } from "./options";

/** The bridge answers a local request at once; one that takes longer is stuck, and saying so beats hanging. */
const REQUEST_TIMEOUT_MS = 15_000;

/**
 * The folder `worldline [folder]` opens, as the real path sessions are keyed by
 * (server/sessions/workspace-path.ts): the current folder, or the argument.
 */
export function resolveFolder(argument: string | undefined): string {
  let cwd: string;
  try {
    cwd = process.cwd();
  } catch {
    throw new CliError(
      "The current folder no longer exists (deleted or unmounted). cd into a folder and run it again.",
    );
  }
  const folder = path.resolve(cwd, argument ?? ".");
  let real: string;
  try {
    real = fs.realpathSync(folder);
  } catch {
    // A bare word is likelier a mistyped command than a folder.
    if (argument !== undefined && !/[\\/.~]/.test(argument)) {
      throw new CliError(
        `Unknown command "${argument}" (and no such folder). Run \`worldline --help\` for usage.`,
        EXIT_USAGE,
      );
    }
    throw new CliError(`The folder ${folder} does not exist.`, EXIT_USAGE);
  }
  if (!fs.statSync(real).isDirectory()) throw new CliError(`${folder} is a file, not a folder.`, EXIT_USAGE);
  try {
    fs.accessSync(real, fs.constants.R_OK | fs.constants.X_OK);
  } catch (error) {
    throw new CliError(`Cannot read the folder ${real} (${(error as NodeJS.ErrnoException).code}).`);
  }
  return real;
}

/** What picking a folder's session needs from a bridge: in this process, or over its HTTP API. */
export interface FolderSessions {
  /** Most recently updated first; `runner` null for a session on the bridge's own machine. */
  list(): Promise<{ id: string; workspace: string; archived: boolean; runner: string | null }[]>;
  create(folder: string): Promise<{ id: string }>;
}

/**
 * The folder's session: the most recently used one on that folder of this machine that is not
 * archived (as `code .` reopens a folder's window), or a new one. A session on a runner with the
 * same path is another machine's folder. Returns the page's path.
 */
export async function openFolderSession(sessions: FolderSessions, folder: string): Promise<string> {
  const existing = (await sessions.list()).find(
    (session) => session.workspace === folder && session.runner === null && !session.archived,
  );
  const session = existing ?? (await sessions.create(folder));
  return `/s/${encodeURIComponent(session.id)}`;
}

/** The sessions of the bridge at `url` (another process), through its API with its token. */
export function sessionsOverHttp(url: string, token: string): FolderSessions {
  return {
    list: async () =>
      z
        .array(SessionSummary)
        .parse(await api(url, token, "GET", "/api/v1/sessions"))
        .map((session) => ({ ...session, runner: session.runner ?? null })),
    create: async (folder) =>
      SessionSummary.parse(await api(url, token, "POST", "/api/v1/sessions", { workspace: folder })),
  };
}

async function api(url: string, token: string, method: string, route: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${url}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  // A body that is not JSON: the status says enough.
  const payload: unknown = await response.json().catch(() => null);
  if (!response.ok) {
    const message = (payload as { error?: { message?: string } } | null)?.error?.message ?? `HTTP ${response.status}`;
    throw new CliError(`The bridge at ${url} refused to open the folder's session: ${message}`);
  }
  return payload;
}
