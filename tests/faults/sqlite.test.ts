import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../fake-llm/server";
import { chat, expectConsistentLog, record, startBridge, tempDir, withLogs, within, type FaultBridge } from "./bridges";
import { hold, waitFor } from "../support/wait";

/**
 * The embedded default (SQLite in WORLDLINE_HOME) under faults: another process holding
 * the database's write lock, and the disk under it filling up mid-turn.
 */
const LOCK_MS = Number(process.env.FAULTS_LOCK_MS ?? 10_000);
const FULL_MS = Number(process.env.FAULTS_FULL_MS ?? 8_000);
const ANSWER = "Every character of this answer reaches the saved history, lock or no lock, disk or no disk.";
/**
 * Health must keep answering while the lock is held. Before, a write waited synchronously for the
 * lock in 5 s busy timeouts (9.9 s was seen); now one statement blocks the event loop at most
 * SQLITE_BUSY_SLICE_MS (20 ms) at a time, and the median answer takes a few ms. The bound is far
 * below one old busy timeout and leaves room for scheduling noise on 2 cores shared with other work
 * (single answers of 0.3 to 2 s were seen under load, with or without the lock).
 */
const HEALTH_LATENCY_LIMIT_MS = 2_500;
/** Most answers during the lock: a freeze of the loop would push these up, not only the slowest. */
const HEALTH_P90_LIMIT_MS = 250;

let fake: FakeLlm;
let workspace: string;
const bridges: FaultBridge[] = [];

beforeAll(async () => {
  fake = await startFakeLlm();
  workspace = await tempDir("wl-faults-ws-");
});

beforeEach(() => fake.reset());

afterAll(async () => {
  await Promise.all(bridges.map((b) => b.stop().catch(() => undefined)));
  await fake?.close();
});

function history(file: string, sessionId: string): { positions: number[]; texts: string[] } {
  const db = new Database(file, { fileMustExist: true });
  try {
    const rows = db
      .prepare(`SELECT "position", "kind", "data" FROM "HistoryEntry" WHERE "sessionId" = ? ORDER BY "position"`)
      .all(sessionId) as { position: number; kind: string; data: string }[];
    const texts = rows
      .filter((row) => row.kind === "message")
      .map((row) => (JSON.parse(row.data) as { message: { role: string; content?: unknown } }).message)
      .filter((message) => message.role === "assistant" && typeof message.content === "string")
      .map((message) => message.content as string);
    return { positions: rows.map((row) => row.position), texts };
  } finally {
    db.close();
  }
}

function turnStatuses(file: string, sessionId: string): string[] {
  const db = new Database(file, { fileMustExist: true });
  try {
    const rows = db.prepare(`SELECT "status" FROM "Turn" WHERE "sessionId" = ? ORDER BY "number"`).all(sessionId);
    return (rows as { status: string }[]).map((row) => row.status);
  } finally {
    db.close();
  }
}

describe("faults on SQLite", () => {
  it("another process holds the write lock: health keeps answering, the turn waits and keeps everything", async () => {
    const home = await tempDir("wl-faults-lock-");
    const bridge = await startBridge({ name: "lock", home, llmUrl: fake.url });
    bridges.push(bridge);
    const file = path.join(home, "worldline.db");
    const { id: sessionId } = await bridge.json<{ id: string }>("/api/v1/sessions", { workspace, yolo: true });
    fake.script({ text: ANSWER, chunkSize: 3, delayMs: 40 });
    const asked = fake.requests.length;
    const turn = chat(bridge, { message: "answer", session_id: sessionId });
    await waitFor(() => fake.requests.length > asked, 20_000, "the model request");

    // sqlite3 holds an exclusive transaction open until told to commit.
    const holder = spawn("sqlite3", [file], { stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    holder.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
    holder.stdin.write("BEGIN EXCLUSIVE;\nSELECT 'locked';\n");
    await waitFor(() => out.includes("locked"), 10_000, "the lock");
    const lockedAt = Date.now();
    const latencies: number[] = [];
    while (Date.now() - lockedAt < LOCK_MS) {
      const started = performance.now();
      const response = await fetch(`${bridge.url}/api/v1/health`);
      expect(response.status).toBe(200);
      latencies.push(performance.now() - started);
      await hold(100, "the pace of health probes while the lock is held");
    }
    holder.stdin.end("COMMIT;\n");
    await new Promise((resolve) => holder.once("exit", resolve));
    const released = Date.now();
    const answered = await turn;
    const recoveryMs = Date.now() - released;

    const worst = Math.max(...latencies);
    const sorted = latencies.slice().sort((x, y) => x - y);
    expect(worst).toBeLessThan(HEALTH_LATENCY_LIMIT_MS);
    expect(sorted[Math.floor(sorted.length * 0.9)]).toBeLessThan(HEALTH_P90_LIMIT_MS);
    expect(answered.text).toBe(ANSWER);
    const { outcomes } = await expectConsistentLog(bridge, sessionId);
    expect([...outcomes.values()]).toEqual(["completed"]);
    const saved = history(file, sessionId);
    expect(saved.positions).toEqual(saved.positions.map((_, index) => index));
    expect(saved.texts).toContain(ANSWER);
    expect(turnStatuses(file, sessionId)).toEqual(["completed"]);
    record("sqlite locked by another process", {
      lockMs: LOCK_MS,
      healthChecks: latencies.length,
      healthMedianMs: Math.round(sorted[Math.floor(sorted.length / 2)]),
      healthMaxMs: Math.round(worst),
      healthSlowestMs: sorted.slice(-5).map(Math.round),
      recoveryMs,
    });
  }, 120_000);

  it.skipIf(process.getuid?.() !== 0 || spawnSync("which", ["unshare"]).status !== 0)(
    "the disk under the database fills mid-turn: the turn says so, waits, and keeps everything once space is back",
    async () => {
      const home = await tempDir("wl-faults-full-");
      // The bridge alone sees a small tmpfs at its data dir; the test reaches it through /proc/<pid>/root.
      const bridge = await startBridge({
        name: "full",
        home,
        llmUrl: fake.url,
        env: { WORLDLINE_STORE_RETRY_MS: String(FULL_MS * 4) },
        wrap: (command) => [
          "unshare",
          "-m",
          "--propagation",
          "private",
          "sh",
          "-c",
          `mount -t tmpfs -o size=64m none "$WORLDLINE_HOME" && exec "$@"`,
          "sh",
          ...command,
        ],
      });
      bridges.push(bridge);
      const inside = `/proc/${bridge.child.pid}/root${home}`;
      const { id: sessionId } = await bridge.json<{ id: string }>("/api/v1/sessions", { workspace, yolo: true });
      fake.script({ text: ANSWER, chunkSize: 3, delayMs: 40 });
      const asked = fake.requests.length;
      const turn = chat(bridge, { message: "answer", session_id: sessionId });
      await waitFor(() => fake.requests.length > asked, 20_000, "the model request");
      const filler = path.join(inside, "filler");
      spawnSync("dd", ["if=/dev/zero", `of=${filler}`, "bs=1M"], { stdio: "ignore" }); // until ENOSPC
      const filled = Date.now();
      // A request that writes meanwhile gets an honest 503 with the fault's code.
      const refused = await bridge.api("/api/v1/sessions", { body: { workspace: await tempDir("wl-faults-ws2-") } });
      const refusal = (await refused.json()) as { error?: { code?: string } };
      expect([refused.status, refusal.error?.code]).toEqual([503, "disk:full"]);
      await hold(Math.max(0, FULL_MS - (Date.now() - filled)), "the full disk itself");
      await fs.rm(filler);
      const freed = Date.now();
      const answered = await withLogs([bridge], () => within(turn, 60_000, "the turn's end"));
      const recoveryMs = Date.now() - freed;

      expect(answered.text).toBe(ANSWER);
      const { log, outcomes } = await expectConsistentLog(bridge, sessionId);
      expect([...outcomes.values()]).toEqual(["completed"]);
      const notices = log.filter((e) => e.type === "notice").map((e) => String(e.payload.text));
      expect(notices.some((text) => /disk full, retrying/i.test(text))).toBe(true);
      // SQLite resolves /proc/<pid>/root to the host's "/": read a copy of the files (the WAL too) instead.
      const copy = await tempDir("wl-faults-copy-");
      for (const name of ["worldline.db", "worldline.db-wal"]) {
        await fs.copyFile(path.join(inside, name), path.join(copy, name)).catch(() => undefined);
      }
      const saved = history(path.join(copy, "worldline.db"), sessionId);
      expect(saved.positions).toEqual(saved.positions.map((_, index) => index));
      expect(saved.texts).toContain(ANSWER);
      expect(turnStatuses(path.join(copy, "worldline.db"), sessionId)).toEqual(["completed"]);
      const fullLines = bridge
        .log()
        .split("\n")
        .filter((line) => /disk full/.test(line));
      expect(fullLines.length).toBeLessThanOrEqual(3);
      record("disk full mid-turn (sqlite on a 64 MB tmpfs)", {
        fullMs: FULL_MS,
        recoveryMs,
        notices,
        logLines: fullLines.length,
      });
    },
    120_000,
  );
});
