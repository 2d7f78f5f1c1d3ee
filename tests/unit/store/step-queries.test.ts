import { describe, expect, it } from "vitest";
import {
  appendHistory,
  createCheckpoint,
  createRule,
  createSession,
  getSetting,
  lastCheckpoint,
  listApplicableRules,
  putSetting,
  setSessionStatus,
  updateSession,
  type Db,
} from "../../../server/store";
import { waitFor } from "../../support/wait";
import { useStoreDb } from "./store-db";

/**
 * The statements an agent step runs. The numbered checkpoint insert is raw SQL (fenced and
 * idempotent in one statement): it must write exactly what Prisma's create does.
 */
describe("store: the statements of an agent step", () => {
  let db: Db;
  useStoreDb("wl-store-step-", (opened) => (db = opened));

  it("a numbered createCheckpoint writes what create does, and lastCheckpoint reads the session's highest number", async () => {
    const session = await createSession(db, { workspace: "/tmp/wl-step-a" });
    const other = await createSession(db, { workspace: "/tmp/wl-step-b" });
    expect(await lastCheckpoint(db, session.id)).toBeNull();
    const written = [];
    for (const number of [0, 2, 1]) {
      written.push(
        await createCheckpoint(db, {
          sessionId: session.id,
          number,
          turn: 1,
          step: number,
          historyPosition: number * 3,
          reason: "step",
          ...(number === 2 ? { snapshot: "abc", filesChanged: '[{"path":"é.txt"}]', note: "Not captured: x" } : {}),
        }),
      );
      await createCheckpoint(db, {
        sessionId: other.id,
        number: number + 10,
        turn: 1,
        step: 0,
        historyPosition: 0,
        reason: "turn",
      });
    }
    for (const row of written) expect(row).toStrictEqual(await db.checkpoint.findUnique({ where: { id: row.id } }));
    expect(written[0].filesChanged).toBe("[]");
    expect(written[0].id).toMatch(/^c[0-9a-z]{24}$/);
    expect(await lastCheckpoint(db, session.id)).toStrictEqual(written[1]);
    expect(written[1].number).toBe(2);
  });

  it("putSetting stores what upsert stores, and replaces the value", async () => {
    await putSetting(db, "step.a", { on: true });
    await db.setting.upsert({ where: { key: "step.b" }, create: { key: "step.b", value: '{"on":true}' }, update: {} });
    const [a, b] = await Promise.all(["step.a", "step.b"].map((key) => db.setting.findUnique({ where: { key } })));
    expect({ ...a, key: "" }).toMatchObject({ ...b, key: "", updatedAt: expect.any(Date) });
    const before = a!.updatedAt;
    await waitFor(() => Date.now() > before.getTime(), 1_000, "the clock to pass the first write's millisecond");
    await putSetting(db, "step.a", "next");
    expect(await getSetting(db, "step.a")).toBe("next");
    expect((await db.setting.findUnique({ where: { key: "step.a" } }))!.updatedAt.getTime()).toBeGreaterThan(
      before.getTime(),
    );
  });

  it("getSetting reads what putSetting stored; undefined for none", async () => {
    await putSetting(db, "step.read", { prices: [1, 2] });
    expect(await getSetting(db, "step.read")).toEqual({ prices: [1, 2] });
    expect(await getSetting(db, "step.none")).toBeUndefined();
  });

  it("setSessionStatus sets what updateSession sets, updatedAt included, and says when there is no session", async () => {
    const raw = await createSession(db, { workspace: "/tmp/wl-step-f" });
    const orm = await createSession(db, { workspace: "/tmp/wl-step-f" });
    await waitFor(() => Date.now() > orm.updatedAt.getTime(), 1_000, "the clock to pass the creations' millisecond");
    expect(await setSessionStatus(db, raw.id, "running")).toBe(true);
    await updateSession(db, orm.id, { status: "running" });
    const [a, b] = await Promise.all([raw.id, orm.id].map((id) => db.session.findUnique({ where: { id } })));
    expect(a!.status).toBe("running");
    expect(a!.updatedAt.getTime()).toBeGreaterThan(raw.updatedAt.getTime());
    const { id: _a, updatedAt: _au, createdAt: _ac, ...restA } = a!;
    const { id: _b, updatedAt: _bu, createdAt: _bc, ...restB } = b!;
    expect(restA).toStrictEqual(restB);
    expect(await setSessionStatus(db, "no-such-session", "idle")).toBe(false);
  });

  it("appendHistory stores what createMany stores", async () => {
    const raw = await createSession(db, { workspace: "/tmp/wl-step-c" });
    const orm = await createSession(db, { workspace: "/tmp/wl-step-c" });
    const entries = [
      { position: 0, kind: "message", data: '{"role":"user","content":"é\\u0000"}' },
      { position: 1, kind: "checkpoint", data: '{"number":0}' },
    ];
    await appendHistory(db, raw.id, entries);
    await db.historyEntry.createMany({ data: entries.map((entry) => ({ ...entry, sessionId: orm.id })) });
    const read = async (sessionId: string) =>
      (await db.historyEntry.findMany({ where: { sessionId }, orderBy: { position: "asc" } })).map(
        ({ id: _id, sessionId: _session, createdAt, ...rest }) => ({ ...rest, createdAt: createdAt instanceof Date }),
      );
    expect(await read(raw.id)).toStrictEqual(await read(orm.id));
    expect(await read(raw.id)).toHaveLength(2);
    // The stored text of the dates has the same form (other queries compare and order by it); the
    // fraction is left out, PostgreSQL's text drops its trailing zeros.
    const form = async (sessionId: string) =>
      (
        await db.$queryRaw<
          { c: string }[]
        >`SELECT "createdAt" || '' AS c FROM "HistoryEntry" WHERE "sessionId" = ${sessionId}`
      ).map((row) => row.c.replace(/\.\d+/, "").replace(/\d/g, "0"));
    expect(await form(raw.id)).toEqual(await form(orm.id));
  });

  it("listApplicableRules reads global, the workspace's and the session's rules, unexpired, oldest first", async () => {
    const session = await createSession(db, { workspace: "/tmp/wl-step-d" });
    const other = await createSession(db, { workspace: "/tmp/wl-step-e" });
    const now = new Date();
    const rule = (scope: string, extra: object, minutes: number | null, pattern: string) =>
      createRule(db, {
        scope,
        tool: "shell",
        pattern,
        action: "allow",
        expiresAt: minutes === null ? null : new Date(now.getTime() + minutes * 60_000),
        ...extra,
      });
    await rule("global", {}, null, "g");
    await rule("session", { sessionId: session.id }, 5, "s-live");
    await rule("session", { sessionId: session.id }, -5, "s-expired");
    await rule("session", { sessionId: other.id }, null, "other-session");
    await rule("workspace", { workspaceId: session.workspaceId }, null, "w");
    await rule("workspace", { workspaceId: other.workspaceId }, null, "other-workspace");
    const rules = await listApplicableRules(db, session.id, session.workspaceId, now);
    expect(rules.map((row) => row.pattern)).toEqual(["g", "s-live", "w"]);
    // Raw SQL, read exactly as Prisma's findMany reads the same rows (every column, the same types).
    const prisma = await db.rule.findMany({
      where: { id: { in: rules.map((row) => row.id) } },
      orderBy: { createdAt: "asc" },
    });
    expect(rules).toStrictEqual(prisma);
  });
});
