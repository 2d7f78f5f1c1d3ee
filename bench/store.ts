/**
 * What the raw SQL statements of the turn path buy: each against the Prisma call it
 * replaced, on a real SQLite store, alternating 300 times, the median of each. The Prisma client
 * here (6.19, engine "client") compiles every query in WebAssembly on the event loop; a raw
 * statement skips that. `first_token_saving_ms` sums the statements a prompt runs before its
 * first token, `step_saving_ms` those of every agent step; bench/README.md weighs them against
 * `ttft_overhead_p50_ms` and `bridge_step_overhead_ms`. Run with `npx tsx bench/store.ts`; the
 * last line printed is one JSON object.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import * as store from "../server/store/index.ts";
import { isMain, printJsonLine } from "./lib/cli.ts";
import { median, round } from "./lib/stats.ts";

const ROUNDS = Number(process.env.WL_BENCH_STORE_ROUNDS ?? 300);
/** Calls before measuring: JIT, SQLite's page cache, Prisma's first compile of each shape. */
const WARMUP = 30;

interface Pair {
  name: string;
  /** Where it runs: before the first token of every prompt, at every step, or elsewhere. */
  path: "first_token" | "step";
  raw: () => Promise<unknown>;
  prisma: () => Promise<unknown>;
}

export interface StoreBenchResult {
  rounds: number;
  statements: Record<string, { raw_ms: number; prisma_ms: number }>;
  first_token_saving_ms: number;
  step_saving_ms: number;
}

export async function run(): Promise<StoreBenchResult> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "wl-bench-store-"));
  const { db } = await store.openDb(home);
  try {
    const session = await store.createSession(db, { workspace: path.join(home, "ws") });
    const { id: sessionId, workspaceId } = session;
    await store.listMemories(db, { visibleTo: { workspace: session.workspace.path, sessionId, ownerId: null } }); // caches the workspace's id
    await store.putSetting(db, "bench.key", { prices: [1, 2, 3] });
    let seq = 0;
    let checkpoint = 0;
    const events = () =>
      [1, 2, 3].map(() => ({
        sessionId,
        seq: ++seq,
        type: "message.part.delta",
        payload: '{"delta":"x"}',
        turnId: null,
        createdAt: new Date(),
      }));
    const checkpointRow = () => ({
      sessionId,
      turn: 1,
      step: 1,
      historyPosition: 0,
      reason: "step",
      number: ++checkpoint,
    });
    const pairs: Pair[] = [
      {
        name: "getSession",
        path: "first_token",
        raw: () => store.getSession(db, sessionId),
        prisma: () => db.session.findUnique({ where: { id: sessionId }, include: { workspace: true } }),
      },
      {
        name: "readEvents",
        path: "first_token",
        raw: () => store.readEvents(db, sessionId, seq, 500),
        prisma: () => db.event.findMany({ where: { sessionId, seq: { gt: seq } }, orderBy: { seq: "asc" }, take: 500 }),
      },
      {
        name: "insertEvents",
        path: "first_token",
        raw: () => store.insertEvents(db, events()),
        prisma: () => db.event.createMany({ data: events() }),
      },
      {
        name: "recallMemories",
        path: "first_token",
        raw: () =>
          store.listMemories(db, {
            visibleTo: { workspace: session.workspace.path, sessionId, ownerId: null },
            limit: 50,
          }),
        prisma: () =>
          db.memory.findMany({
            where: {
              ownerId: null,
              OR: [{ scope: "global" }, { scope: "workspace", workspaceId }, { scope: "session", sessionId }],
            },
            orderBy: [{ createdAt: "desc" }, { id: "desc" }],
            take: 50,
          }),
      },
      {
        name: "setSessionStatus",
        path: "first_token",
        raw: () => store.setSessionStatus(db, sessionId, "running"),
        prisma: () => db.session.update({ where: { id: sessionId }, data: { status: "running" } }),
      },
      {
        name: "lastCheckpoint",
        path: "step",
        raw: () => store.lastCheckpoint(db, sessionId),
        prisma: () => db.checkpoint.findFirst({ where: { sessionId }, orderBy: { number: "desc" } }),
      },
      {
        name: "createCheckpoint",
        path: "step",
        raw: () => store.createCheckpoint(db, checkpointRow()),
        prisma: () => db.checkpoint.create({ data: checkpointRow() }),
      },
      {
        name: "listApplicableRules",
        path: "step",
        raw: () => store.listApplicableRules(db, sessionId, workspaceId),
        prisma: () =>
          db.rule.findMany({
            where: {
              OR: [{ scope: "global" }, { scope: "workspace", workspaceId }, { scope: "session", sessionId }],
              AND: [{ OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }] }],
            },
            orderBy: { createdAt: "asc" },
          }),
      },
    ];
    const statements: StoreBenchResult["statements"] = {};
    for (const pair of pairs) {
      const raw: number[] = [];
      const prisma: number[] = [];
      for (let i = 0; i < WARMUP + ROUNDS; i++) {
        const a = await timed(pair.raw);
        const b = await timed(pair.prisma);
        if (i < WARMUP) continue;
        raw.push(a);
        prisma.push(b);
      }
      statements[pair.name] = { raw_ms: round(median(raw), 3), prisma_ms: round(median(prisma), 3) };
    }
    const saving = (where: Pair["path"]) =>
      round(
        pairs
          .filter((pair) => pair.path === where)
          .reduce((sum, pair) => sum + statements[pair.name].prisma_ms - statements[pair.name].raw_ms, 0),
      );
    return { rounds: ROUNDS, statements, first_token_saving_ms: saving("first_token"), step_saving_ms: saving("step") };
  } finally {
    await db.$disconnect();
    fs.rmSync(home, { recursive: true, force: true });
  }
}

async function timed(call: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await call();
  return performance.now() - start;
}

if (isMain(import.meta.url)) {
  const result = await run();
  console.log(result);
  printJsonLine(result);
}
