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
});
