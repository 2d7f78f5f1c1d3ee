import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { io, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BoardCard } from "../../../server/protocol";
import { TEST_POSTGRES } from "../../db";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { waitFor } from "../../support/wait";
import { emitCommand, uniqueId } from "../helpers";
import { CHILD_TOKEN, startChildBridge, type ChildBridge } from "../reliability/child-bridge";
import { makeRepo, type SessionJson } from "./support";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/**
 * One board across a team: two `worldline serve` processes (A, B) on one PostgreSQL database and
 * one Redis. A board tab on B sees a worktree session made and run on A appear, run, wait for an
 * approval, move to review with A's diff stat, and be archived, each as a live card, nothing polled.
 */
describe.skipIf(!TEST_POSTGRES)("the board in team mode (PostgreSQL + Redis; set WORLDLINE_TEST_POSTGRES)", () => {
  let fake: FakeLlm;
  let database: string;
  const bridges: ChildBridge[] = [];
  const sockets: Socket[] = [];
  const homes: string[] = [];

  const databaseUrl = (name: string) => Object.assign(new URL(TEST_POSTGRES), { pathname: `/${name}` }).toString();

  /** A call to a bridge's API that must succeed; its JSON. */
  async function json<T>(bridge: ChildBridge, pathname: string, body?: unknown): Promise<T> {
    const response = await bridge.api(pathname, { body });
    expect(response.status, `${pathname}: ${await response.clone().text()}`).toBeLessThan(300);
    return (await response.json()) as T;
  }

  async function socketOn(bridge: ChildBridge): Promise<Socket> {
    const socket = io(bridge.url, { auth: { token: CHILD_TOKEN }, transports: ["websocket"], forceNew: true });
    sockets.push(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", () => resolve());
      socket.once("connect_error", reject);
    });
    return socket;
  }

  beforeAll(async () => {
    fake = await startFakeLlm();
    database = `wlt_board_${randomUUID().replaceAll("-", "")}`;
    const env = { DATABASE_URL: databaseUrl(database), REDIS_URL, WORLDLINE_REDIS_PREFIX: `wlt-${randomUUID()}` };
    // One at a time: the first creates and migrates the database.
    for (const name of ["A", "B"]) {
      const home = await fs.mkdtemp(path.join(os.tmpdir(), `wl-board-team-${name}-`));
      homes.push(home);
      bridges.push(await startChildBridge({ home, llmUrl: fake.url, env: { ...env, HOME: home } }));
    }
  }, 120_000);

  afterAll(async () => {
    for (const socket of sockets) socket.disconnect();
    for (const bridge of bridges) {
      if (bridge.child.exitCode !== null || bridge.child.signalCode !== null) continue;
      bridge.child.kill("SIGTERM");
      await bridge.exited;
    }
    await fake?.close();
    const client = new pg.Client({ connectionString: databaseUrl("postgres") });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(database)} WITH (FORCE)`);
    await client.end();
    for (const home of homes) await fs.rm(home, { recursive: true, force: true });
  });

  it("a session run by bridge A moves on the board a tab on bridge B watches", async () => {
    const [A, B] = bridges;
    const board = await socketOn(B);
    const cards = new Map<string, BoardCard>();
    const states: string[] = [];
    board.on("board.card", (raw: unknown) => {
      const card = BoardCard.parse(raw);
      cards.set(card.id, card);
      states.push(`${card.id}:${card.state}`);
    });
    await emitCommand(board, "board.subscribe", {});

    // Made on A after B's tab subscribed: B hears of it through the bus.
    const repo = await makeRepo();
    const session = await json<SessionJson>(A, "/api/v1/sessions", {
      workspace: repo,
      isolation: "worktree",
      title: "Team agent",
    });
    await waitFor(() => cards.get(session.id), 15_000, "the new session's card on B");
    expect(cards.get(session.id)).toMatchObject({ title: "Team agent", state: "idle", worktree: session.worktree });

    fake.script(
      { toolCalls: [{ name: "write_file", arguments: { path: "team.txt", content: "from A\n" } }] },
      { text: "Wrote team.txt." },
    );
    const driver = await socketOn(A);
    await emitCommand(driver, "turn.prompt", { commandId: uniqueId(), sessionId: session.id, text: "Write team.txt" });

    // The approval A waits on shows on B's card; deciding it on A moves the card on.
    // The request's row (its bus message) and its log event reach B apart: a card may show "needs you"
    // before the event that says what waits; the card both have reached is the one to check.
    const waiting = await waitFor(
      () => {
        const card = cards.get(session.id);
        return card?.state === "needs_you" && card.last_activity === "waits for approval: write_file"
          ? card
          : undefined;
      },
      30_000,
      "needs you on B, waiting for write_file",
    );
    expect(waiting.approval).toMatchObject({ tool: "write_file" });
    await json(A, `/api/v1/approvals/${waiting.approval!.approval_id}`, { decision: "allow_once" });

    await waitFor(() => cards.get(session.id)?.state === "review", 30_000, "review on B");
    const reviewed = cards.get(session.id)!;
    expect(reviewed.changes).toEqual({ files: 1, additions: 1, deletions: 0 });
    expect(reviewed.last_activity).toBe("edited team.txt");
    expect(reviewed.approval).toBeNull();
    const seen = states.filter((entry) => entry.startsWith(`${session.id}:`)).map((entry) => entry.split(":")[1]);
    expect(seen).toContain("running");
    expect(seen.indexOf("running")).toBeLessThan(seen.lastIndexOf("review"));

    // Archived on A (forced: the work is uncommitted): B's card says so.
    await json(A, `/api/v1/sessions/${session.id}/archive`, { force: true });
    await waitFor(() => cards.get(session.id)?.state === "archived", 15_000, "archived on B");
  }, 120_000);
});
