import { promises as fs, readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { queryTestDb, TEST_POSTGRES } from "../../db";
import { hold, waitFor } from "../../support/wait";
import { CHILD_TOKEN, connectTo, startChildBridge, type ChildBridge } from "./child-bridge";

/**
 * `kill -9` of the bridge mid-turn, KILLS times, restarting it on the same
 * WORLDLINE_HOME each time. After every restart: the database passes
 * `PRAGMA integrity_check`, each session's seqs run 1..n without a gap, every event
 * a client had read through GET /events before the kill is still there unchanged,
 * the turns that were running are interrupted with a visible note, a turn that waited on
 * an approval still waits on it (allowing it finishes the turn), the processes they started
 * (background task, foreground command, terminal) are gone, and a new prompt works.
 */
const KILLS = Number(process.env.CRASH_KILLS ?? 5);

interface WireEvent {
  seq: number;
  type: string;
  payload: Record<string, unknown>;
}

let fake: FakeLlm;
let home: string;
let workspace: string;
let bridge: ChildBridge | undefined;
const stats = { kills: 0, eventsChecked: 0, eventsLost: 0, orphansKilled: 0 };

beforeAll(async () => {
  fake = await startFakeLlm();
  home = await fs.mkdtemp(path.join(os.tmpdir(), "wl-crash-home-"));
  workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-crash-ws-")));
});

afterAll(async () => {
  if (bridge && bridge.child.exitCode === null) {
    bridge.child.kill("SIGKILL");
    await bridge.exited;
  }
  await fake.close();
  console.info(
    `[reliability/crash] kills survived: ${stats.kills}, events checked: ${stats.eventsChecked}, events lost: ${stats.eventsLost}, orphan processes killed: ${stats.orphansKilled}`,
  );
});

async function json<T>(response: Promise<Response>): Promise<T> {
  const res = await response;
  if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** A crash round's steps (processes starting, a bridge restarting) may take this long on a loaded machine. */
const CRASH_WAIT_MS = 30_000;

/** The shared wait, naming what it waited for with the bridge's stderr (a crash test's best clue). */
function waitForBridge<T>(what: string, check: () => Promise<T>): Promise<NonNullable<T>> {
  return waitFor(check, CRASH_WAIT_MS, () => `${what}\n${bridge?.stderr() ?? ""}`);
}

const events = (b: ChildBridge, sessionId: string) => json<WireEvent[]>(b.api(`/api/v1/sessions/${sessionId}/events`));

const connect = connectTo;

/** Live processes whose command line contains `marker`. */
function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ");
      const state = readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]?.[0];
      if (cmdline.includes(marker) && state !== "Z") pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

/** PostgreSQL has no integrity pragma: it checks its pages as it reads them (and would fail the queries). */
async function dbCheck(): Promise<{
  integrity: string;
  turns: { id: string; sessionId: string; status: string }[];
  approvals: { status: string; turnId: string | null }[];
}> {
  const integrity = TEST_POSTGRES
    ? "ok"
    : (await queryTestDb<{ integrity_check: string }>(home, "PRAGMA integrity_check"))[0].integrity_check;
  return {
    integrity,
    turns: await queryTestDb(home, 'SELECT "id", "sessionId", "status" FROM "Turn"'),
    approvals: await queryTestDb(home, 'SELECT "status", "turnId" FROM "Approval"'),
  };
}

describe("kill -9 mid-turn", () => {
  it(`survives ${KILLS} kills without losing an acknowledged event`, async () => {
    bridge = await startChildBridge({ home, llmUrl: fake.url });
    const yolo = (await json<{ id: string }>(bridge.api("/api/v1/sessions", { body: { workspace, yolo: true } }))).id;
    const careful = (await json<{ id: string }>(bridge.api("/api/v1/sessions", { body: { workspace } }))).id;
    const acknowledged = new Map<string, WireEvent[]>();

    for (let round = 0; round < KILLS; round++) {
      const marker = `wl-crash-${process.pid}-${round}`;
      const socket = await connect(bridge);
      const ack = (name: string, payload: unknown) =>
        socket.timeout(10_000).emitWithAck(name, payload) as Promise<{ ok: boolean; error?: unknown }>;

      // 1. A turn waiting for approval (a write in a session without yolo).
      fake.script({ toolCalls: [{ name: "write_file", arguments: { path: `round-${round}.txt`, content: "x" } }] });
      expect(
        (await ack("turn.prompt", { commandId: `cmd-${marker}-a`, sessionId: careful, text: `write round ${round}` }))
          .ok,
      ).toBe(true);
      const [asked] = await waitForBridge("a pending approval", async () => {
        const rows = await json<{ approval_id: string; task_id: string }[]>(
          bridge!.api("/api/v1/approvals?status=pending"),
        );
        return rows.length ? rows : undefined;
      });
      // Once its run state is stored, the waiting turn outlives the kill (server/agent/run-state.ts).
      await waitForBridge("the waiting turn's run state", async () => {
        const rows = await queryTestDb<{ runState: string | null }>(
          home,
          `SELECT "runState" FROM "Turn" WHERE "id" = '${asked.task_id}'`,
        );
        return rows[0]?.runState ?? undefined;
      });

      // 2. A turn in a tool call, with a background task and a terminal running.
      const mode = round % 3;
      fake.script(
        { toolCalls: [{ name: "shell", arguments: { command: `exec -a ${marker}-bg sleep 300`, background: true } }] },
        mode === 1
          ? { hang: true }
          : {
              toolCalls: [
                { name: "shell", arguments: { command: `echo started-${round}; exec -a ${marker}-fg sleep 300` } },
              ],
            },
      );
      expect(
        (
          await ack("pty.run", {
            commandId: `cmd-${marker}-pty`,
            sessionId: yolo,
            line: `exec -a ${marker}-pty sleep 300`,
          })
        ).ok,
      ).toBe(true);
      expect(
        (await ack("turn.prompt", { commandId: `cmd-${marker}-b`, sessionId: yolo, text: `work round ${round}` })).ok,
      ).toBe(true);
      await waitForBridge("the background task", async () => processesWith(`${marker}-bg`).length > 0);
      if (mode === 0)
        await waitForBridge("the foreground command", async () => processesWith(`${marker}-fg`).length > 0);
      if (mode === 1)
        await waitForBridge(
          "the hanging model request",
          async () =>
            fake.requests.length > 0 &&
            (await events(bridge!, yolo)).some((e) => e.type === "tool.state" && e.payload.state === "completed"),
        );
      await waitForBridge("the terminal", async () => processesWith(`${marker}-pty`).length > 0);
      if (mode === 2) await hold(Math.floor(Math.random() * 60), "the kill lands at a random moment of the turn");

      // 3. What a client has read (and so was persisted: reads flush first).
      for (const sessionId of [yolo, careful]) acknowledged.set(sessionId, await events(bridge, sessionId));
      socket.disconnect();

      bridge.child.kill("SIGKILL");
      expect((await bridge.exited).signal).toBe("SIGKILL");
      stats.kills += 1;
      const orphans = [
        ...processesWith(`${marker}-bg`),
        ...processesWith(`${marker}-fg`),
        ...processesWith(`${marker}-pty`),
      ];
      expect(orphans.length).toBeGreaterThan(0);
      fake.reset();

      // 4. Restart on the same home.
      bridge = await startChildBridge({ home, llmUrl: fake.url });
      const left = [
        ...processesWith(`${marker}-bg`),
        ...processesWith(`${marker}-fg`),
        ...processesWith(`${marker}-pty`),
      ];
      expect(left).toEqual([]);
      // Killed by the new bridge from its process records (not by chance: detached groups outlive their parent).
      expect(bridge.stderr()).toMatch(/stopped \d+ process\(es\) left running by a bridge that died/);
      stats.orphansKilled += orphans.length;

      const db = await dbCheck();
      expect(db.integrity).toBe("ok");
      // The turn waiting on a person still waits, on its request still pending; the busy one was interrupted.
      const unfinished = db.turns.filter((turn) => turn.status === "running" || turn.status === "waiting");
      expect(unfinished.map((turn) => turn.id)).toEqual([asked.task_id]);
      expect(db.approvals.filter((approval) => approval.status === "pending")).toEqual([
        { status: "pending", turnId: asked.task_id },
      ]);

      for (const sessionId of [yolo, careful]) {
        const after = await events(bridge, sessionId);
        expect(after.map((event) => event.seq)).toEqual(after.map((_event, i) => i + 1));
        const bySeq = new Map(after.map((event) => [event.seq, event]));
        for (const before of acknowledged.get(sessionId)!) {
          stats.eventsChecked += 1;
          const now = bySeq.get(before.seq);
          if (!now || now.type !== before.type || JSON.stringify(now.payload) !== JSON.stringify(before.payload))
            stats.eventsLost += 1;
        }
        if (sessionId === careful) continue;
        // The interrupted turn says so, visibly.
        const tail = after.slice(acknowledged.get(sessionId)!.length);
        expect(tail.some((event) => event.type === "notice" && /interrupted/.test(String(event.payload.text)))).toBe(
          true,
        );
        expect(tail.some((event) => event.type === "turn.completed" && event.payload.outcome === "interrupted")).toBe(
          true,
        );
      }
      expect(stats.eventsLost).toBe(0);

      // 5. Allowing the waiting request finishes its turn on the new bridge.
      const waited = (await events(bridge, careful)).length;
      fake.script({ text: `written in round ${round}` });
      const allowed = await json<{ status: string }>(
        bridge.api(`/api/v1/approvals/${asked.approval_id}`, { body: { decision: "allow_once" } }),
      );
      expect(allowed.status).toBe("approved");
      const resumed = await waitForBridge("the resumed turn", async () =>
        (await events(bridge!, careful)).slice(waited).find((event) => event.type === "turn.completed"),
      );
      expect(resumed.payload).toMatchObject({ turnId: asked.task_id, outcome: "completed" });
      expect(await fs.readFile(path.join(workspace, `round-${round}.txt`), "utf8")).toBe("x");
      fake.reset();

      // 6. The session continues.
      const next = await connect(bridge);
      const before = (await events(bridge, yolo)).length;
      fake.script({ text: `alive after kill ${round}` });
      const prompted = (await next
        .timeout(10_000)
        .emitWithAck("turn.prompt", { commandId: `cmd-${marker}-c`, sessionId: yolo, text: "still there?" })) as {
        ok: boolean;
      };
      expect(prompted.ok).toBe(true);
      const completed = await waitForBridge("the new turn", async () =>
        (await events(bridge!, yolo)).slice(before).find((event) => event.type === "turn.completed"),
      );
      expect(completed.payload.outcome).toBe("completed");
      next.disconnect();
      fake.reset();
    }
    expect(stats.kills).toBe(KILLS);
    expect(bridge.stderr()).not.toContain(CHILD_TOKEN);
  }, 600_000);

  it("closes cleanly on SIGTERM: turns cancelled, processes killed, database closed", async () => {
    const b = bridge!;
    const yolo = (await json<{ id: string }>(b.api("/api/v1/sessions", { body: { workspace, yolo: true } }))).id;
    const marker = `wl-term-${process.pid}`;
    const socket = await connect(b);
    fake.script(
      { toolCalls: [{ name: "shell", arguments: { command: `exec -a ${marker}-bg sleep 300`, background: true } }] },
      { toolCalls: [{ name: "shell", arguments: { command: `exec -a ${marker}-fg sleep 300` } }] },
    );
    await socket.timeout(10_000).emitWithAck("pty.run", {
      commandId: `cmd-${marker}-pty`,
      sessionId: yolo,
      line: `exec -a ${marker}-pty sleep 300`,
    });
    await socket
      .timeout(10_000)
      .emitWithAck("turn.prompt", { commandId: `cmd-${marker}-a`, sessionId: yolo, text: "work" });
    await waitForBridge(
      "the foreground command",
      async () => processesWith(`${marker}-fg`).length > 0 && processesWith(`${marker}-bg`).length > 0,
    );
    await waitForBridge("the terminal", async () => processesWith(`${marker}-pty`).length > 0);
    socket.disconnect();
    b.child.kill("SIGTERM");
    const exit = await b.exited;
    expect(exit.code).toBe(0);
    expect(b.stderr()).toMatch(/\[entry\] closed/);
    expect([
      ...processesWith(`${marker}-bg`),
      ...processesWith(`${marker}-fg`),
      ...processesWith(`${marker}-pty`),
    ]).toEqual([]);
    const db = await dbCheck();
    expect(db.integrity).toBe("ok");
    expect(db.turns.filter((turn) => turn.sessionId === yolo).map((turn) => turn.status)).toEqual(["cancelled"]);
    // A clean close leaves no WAL to replay (SQLite's; PostgreSQL's is the server's own).
    const wal = await fs.stat(path.join(home, "worldline.db-wal")).catch(() => undefined);
    expect(wal?.size ?? 0).toBe(0);
    bridge = undefined;
  }, 120_000);
});
