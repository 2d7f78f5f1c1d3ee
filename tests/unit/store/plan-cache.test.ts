import { afterEach, describe, expect, it, vi } from "vitest";
import { createSession, getSetting, providerOf, type Db } from "../../../server/store";
import { useStoreDb } from "./store-db";

/** The query compiler's class, which server/store/plan-cache.ts wraps for the client. */
interface CompilerModule {
  QueryCompiler: { prototype: { compile(request: string): object } };
}

async function compilerRuntime(db: Db): Promise<CompilerModule> {
  const provider = providerOf(db) === "postgresql" ? "postgresql" : "sqlite";
  return (await import(`@prisma/client/runtime/query_compiler_bg.${provider}.mjs`)) as CompilerModule;
}

describe("store: compiled query plans are reused", () => {
  let db: Db;
  useStoreDb("wl-store-plans-", (opened) => (db = opened));
  afterEach(() => vi.restoreAllMocks());

  it("a repeated request compiles once, and what its plan generates (ids, now()) is new on every run", async () => {
    const { QueryCompiler } = await compilerRuntime(db);
    const compile = vi.spyOn(QueryCompiler.prototype, "compile");
    const { workspaceId } = await createSession(db, { workspace: "/tmp/wl-plans" });
    const create = () => db.session.create({ data: { workspaceId, title: "same request" } });
    const first = await create();
    const compiled = compile.mock.calls.length;
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await create();
    expect(compile.mock.calls.length).toBe(compiled);
    expect(second.id).not.toBe(first.id);
    expect(second.createdAt.getTime()).toBeGreaterThan(first.createdAt.getTime());
    // Other values are another request.
    await db.session.create({ data: { workspaceId, title: "another title" } });
    expect(compile.mock.calls.length).toBe(compiled + 1);
  });

  it("keeps a bounded number of plans: the least recently used is compiled again", async () => {
    const { QueryCompiler } = await compilerRuntime(db);
    const compile = vi.spyOn(QueryCompiler.prototype, "compile");
    await getSetting(db, "plans.0");
    for (let i = 1; i <= 500; i++) await getSetting(db, `plans.${i}`);
    const compiled = compile.mock.calls.length;
    await getSetting(db, "plans.500");
    expect(compile.mock.calls.length).toBe(compiled);
    await getSetting(db, "plans.0");
    expect(compile.mock.calls.length).toBe(compiled + 1);
  });

  it("a raw statement compiles once per kind of its values, and runs with each run's own values", async () => {
    const { QueryCompiler } = await compilerRuntime(db);
    const compile = vi.spyOn(QueryCompiler.prototype, "compile");
    const marker = providerOf(db) === "postgresql" ? "$1" : "?";
    const select = (sql: string, value: unknown) => db.$queryRawUnsafe<{ v: unknown }[]>(sql, value);
    // Bytes come back from a column of a declared type only: their hex is read instead.
    const hex = providerOf(db) === "postgresql" ? "encode($1, 'hex')" : "hex(?)";
    // Pairs of the same kind: the first compiles the statement's plan, the second must reuse it and
    // answer as a statement compiled for it alone.
    const pairs: [unknown, unknown, string?][] = [
      ["a", "2026-11-29T19:22:30.895Z"],
      ["b", "12345"],
      [1, 2147483647],
      [-1, -2147483648],
      [2147483648, 9007199254740991],
      [-2147483649, -4294967296],
      [1.5, 0.1],
      [true, false],
      [null, null],
      [new Date(0), new Date("2026-11-29T19:22:30.895Z")],
      [1n, 9223372036854775807n],
      [Buffer.from("a"), Buffer.from([0, 255, 7]), hex],
      [{ a: 1 }, { b: [2, "c"] }],
    ];
    for (const [index, [first, second, expression = marker]] of pairs.entries()) {
      const shared = `SELECT ${expression} AS v /* kept ${index} */`;
      await select(shared, first);
      const compiled = compile.mock.calls.length;
      const kept = await select(shared, second);
      const alone = await select(`SELECT ${expression} AS v /* alone ${index} */`, second);
      expect(kept, `${String(first)} then ${String(second)}`).toStrictEqual(alone);
      // An object among the values is compiled each time; every other kind is reused.
      const reused = typeof first !== "object" || first === null || first instanceof Date || first instanceof Buffer;
      expect(compile.mock.calls.length).toBe(compiled + (reused ? 1 : 2));
    }
    // Another kind of value is another plan: an integer past 32 bits after one inside them.
    const shared = `SELECT ${marker} AS v /* kinds */`;
    await select(shared, 7);
    const compiled = compile.mock.calls.length;
    expect(await select(shared, 2 ** 40)).toStrictEqual(
      await select(`SELECT ${marker} AS v /* kinds alone */`, 2 ** 40),
    );
    expect(compile.mock.calls.length).toBe(compiled + 2);
  });
});
