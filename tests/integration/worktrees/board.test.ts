import fs from "node:fs/promises";
import path from "node:path";
import type { Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BoardCard } from "../../../server/protocol";
import { emitCommand, startTestBridge, waitFor, type TestBridge } from "../helpers";
import { makeRepo, post, worktreeSession } from "./support";
import { createApproval, openDb } from "../../../server/store";
import { testDatabaseUrl } from "../../db";
import { hold } from "../../support/wait";

/** Every card a socket got, latest per session, each checked against the protocol. */
function collect(socket: Socket): { cards: Map<string, BoardCard>; all: BoardCard[]; removed: string[] } {
  const seen = { cards: new Map<string, BoardCard>(), all: [] as BoardCard[], removed: [] as string[] };
  socket.on("board.card", (raw: unknown) => {
    const card = BoardCard.parse(raw);
    seen.all.push(card);
    seen.cards.set(card.id, card);
  });
  socket.on("board.removed", (raw: { id: string }) => seen.removed.push(raw.id));
  return seen;
}

describe("the board's live cards", () => {
  let bridge: TestBridge;
  beforeAll(async () => {
    bridge = await startTestBridge();
  });
  afterAll(() => bridge?.stop());

  it("sends a card per session on subscribe, then each change: new session, diff stat, commit, merge, archive, delete", async () => {
    const repo = await makeRepo();
    const first = await worktreeSession(bridge, repo, { title: "First agent" });
    const socket = await bridge.socket();
    const seen = collect(socket);
    await emitCommand(socket, "board.subscribe", {});
    const initial = seen.cards.get(first.id)!;
    expect(initial).toMatchObject({
      title: "First agent",
      group: repo,
      state: "idle",
      worktree: first.worktree,
      changes: { files: 0, additions: 0, deletions: 0 },
      approval: null,
      turn_started_at: null,
    });

    const second = await worktreeSession(bridge, repo, { title: "Second agent" });
    await waitFor(() => seen.cards.get(second.id), 10_000, "the new session's card");

    await fs.writeFile(path.join(second.worktree!.path, "n.txt"), "1\n2\n");
    await bridge.services.worktrees!.refreshChanges(second.id);
    await waitFor(() => seen.cards.get(second.id)?.state === "review", 10_000, "the card in review");
    expect(seen.cards.get(second.id)!.changes).toEqual({ files: 1, additions: 2, deletions: 0 });

    await post(bridge, `/api/v1/sessions/${second.id}/commit`, { message: "n" });
    await post(bridge, `/api/v1/sessions/${second.id}/merge`, { strategy: "squash" });
    await waitFor(() => seen.cards.get(second.id)?.state === "idle", 10_000, "the merged card idle");
    expect(seen.cards.get(second.id)!.changes!.files).toBe(0);

    await post(bridge, `/api/v1/sessions/${second.id}/archive`, {});
    await waitFor(() => seen.cards.get(second.id)?.state === "archived", 10_000, "the archived card");

    const count = seen.all.length;
    await bridge.api(`/api/v1/sessions/${first.id}`, { method: "DELETE" });
    await waitFor(() => seen.removed.includes(first.id), 10_000, "board.removed");
    // The same card is never sent twice in a row.
    for (let i = 1; i < seen.all.length; i++) {
      if (seen.all[i].id === seen.all[i - 1].id) expect(seen.all[i]).not.toEqual(seen.all[i - 1]);
    }
    expect(seen.all.length).toBeGreaterThanOrEqual(count);

    await emitCommand(socket, "board.unsubscribe", {});
    const after = seen.all.length;
    await worktreeSession(bridge, repo, { title: "Unseen" });
    await post(bridge, "/api/v1/sessions", { workspace: repo });
    await bridge.services.log.flush();
    await hold(500, "a quiet window: no card may arrive after board.unsubscribe");
    expect(seen.all.length).toBe(after);
  });

  it("puts a waiting approval on its card", async () => {
    const repo = await makeRepo();
    const created = await worktreeSession(bridge, repo, { title: "Asks" });
    const socket = await bridge.socket();
    const seen = collect(socket);
    await emitCommand(socket, "board.subscribe", {});
    // A request as the approval gate writes it: a row and its event (server/approvals).
    const { db } = await openDb(bridge.home, testDatabaseUrl(bridge.home));
    try {
      const row = await createApproval(db, {
        sessionId: created.id,
        turnId: null,
        toolCallId: "call-1",
        tool: "shell",
        args: JSON.stringify({ command: "rm -rf build" }),
        description: "rm -rf build",
        riskLevel: "high",
      });
      bridge.services.log.append(created.id, {
        type: "approval.requested",
        payload: {
          turnId: "t",
          approvalId: row.id,
          toolCallId: "call-1",
          tool: "shell",
          args: { command: "rm -rf build" },
          description: "rm -rf build",
          riskLevel: "high",
          kind: "tool",
        },
      });
      const card = await waitFor(() =>
        seen.cards.get(created.id)?.state === "needs_you" ? seen.cards.get(created.id) : null,
      );
      expect(card.approval).toEqual({
        approval_id: row.id,
        tool: "shell",
        description: "rm -rf build",
        risk_level: "high",
      });
      expect(card.last_activity).toBe("waits for approval: shell");
    } finally {
      await db.$disconnect();
    }
  });
});
