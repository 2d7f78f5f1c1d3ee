import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import * as z from "zod";

/**
 * What a running web bridge leaves in WORLDLINE_HOME/run/bridges/<pid>.json, so that `worldline`
 * in another folder opens that folder in it instead of starting a second bridge (Jupyter's
 * runtime files, opencode's server discovery). The file holds the launch token: it is readable
 * by this user only, in a data dir that is too (server/store/db.ts makes it 0700).
 */
const BridgeRecord = z.object({
  pid: z.number().int().positive(),
  url: z.string().url(),
  host: z.string(),
  port: z.number().int(),
  token: z.string().min(1),
  version: z.string(),
  /** The model environment it started with (modelEnvironment); absent in records of older versions. */
  model: z.record(z.string(), z.string()).optional(),
});
export type BridgeRecord = z.infer<typeof BridgeRecord>;

/** A bridge that does not answer its health check within this is taken for gone (or hung). */
const HEALTH_TIMEOUT_MS = 1_500;

/**
 * The variables that choose the model. A running bridge keeps the ones it started with, so a
 * `worldline` run with others (README's quick start) says so rather than silently using the old.
 */
const MODEL_VARIABLES = [
  "WORLDLINE_MODEL",
  "OPENAI_BASE_URL",
  "OPENAI_API_KEY",
  "WORLDLINE_CONTEXT_WINDOW",
  "WORLDLINE_REASONING_HISTORY",
  "WORLDLINE_PROMPT_CACHE_KEY",
] as const;
/** Kept as a fingerprint only: enough to tell two keys apart, never the key. */
const SECRET_VARIABLES = new Set<string>(["OPENAI_API_KEY"]);
const FINGERPRINT_HEX_CHARS = 16;

/** The model variables set in `env`, secrets as fingerprints: what a bridge record keeps. */
export function modelEnvironment(env: Record<string, string | undefined>): Record<string, string> {
  const set: Record<string, string> = {};
  for (const name of MODEL_VARIABLES) {
    const value = env[name];
    if (!value) continue; // empty counts as unset, as in the configuration (server/config/env.ts)
    set[name] = SECRET_VARIABLES.has(name)
      ? `sha256:${createHash("sha256").update(value).digest("hex").slice(0, FINGERPRINT_HEX_CHARS)}`
      : value;
  }
  return set;
}

/**
 * The model variables the caller set that the running bridge has otherwise (another value, or
 * unset there). Empty when the caller set none, or the record predates them (nothing to compare).
 */
export function modelDifferences(caller: Record<string, string>, running: BridgeRecord): string[] {
  const theirs = running.model;
  if (!theirs) return [];
  return Object.keys(caller).filter((name) => theirs[name] !== caller[name]);
}

function recordsDir(home: string): string {
  return path.join(home, "run", "bridges");
}

/** Written once the bridge listens; the returned function removes it (on shutdown). */
export function writeBridgeRecord(home: string, record: BridgeRecord): () => void {
  const dir = recordsDir(home);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, `${record.pid}.json`);
  const temporary = `${file}.tmp`;
  fs.writeFileSync(temporary, JSON.stringify(record), { mode: 0o600 });
  fs.renameSync(temporary, file);
  return () => fs.rmSync(file, { force: true });
}

/**
 * A bridge of this WORLDLINE_HOME that is alive and answers, preferring (and, when the user named
 * a port or host, requiring) that port and host. Records of processes that are gone are removed.
 */
export async function findRunningBridge(
  home: string,
  wanted: { port?: number; host?: string },
): Promise<BridgeRecord | undefined> {
  const dir = recordsDir(home);
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((name) => name.endsWith(".json"));
  } catch {
    return undefined; // no bridge ever ran with this home
  }
  for (const name of names) {
    const file = path.join(dir, name);
    const record = readRecord(file);
    if (!record || !alive(record.pid)) {
      fs.rmSync(file, { force: true });
      continue;
    }
    if (record.pid === process.pid) continue;
    if (wanted.port !== undefined && wanted.port !== 0 && record.port !== wanted.port) continue;
    if (wanted.host !== undefined && record.host !== wanted.host) continue;
    if (await answers(record)) return record;
  }
  return undefined;
}

function readRecord(file: string): BridgeRecord | undefined {
  try {
    return BridgeRecord.parse(JSON.parse(fs.readFileSync(file, "utf8")));
  } catch {
    return undefined; // unreadable, or written by another version: not reused (and removed)
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false; // ESRCH: gone; EPERM: another user's process, so not this user's bridge
  }
}

async function answers(record: BridgeRecord): Promise<boolean> {
  try {
    const response = await fetch(`${record.url}/api/v1/health`, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) });
    return response.ok;
  } catch {
    return false; // not listening (yet, or any more): started afresh instead
  }
}
