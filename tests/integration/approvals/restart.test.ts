import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { EventLog } from "../../../server/sessions";
import * as store from "../../../server/store";
import { startFakeLlm } from "../../fake-llm/server";
import type { FakeLlm } from "../../fake-llm/types";
import { startApprovalBridge } from "./support";
import { testDatabaseUrl } from "../../db";

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake.close();
});

it("a bridge restart marks requests whose turn died interrupted, on the row and on the session log", async () => {
  // What a crashed bridge leaves behind: a running turn waiting on a pending request.
  const home = await fs.mkdtemp(path.join(os.tmpdir(), "wl-appr-restart-"));
  const workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-appr-ws-")));
  const { db } = await store.openDb(home, testDatabaseUrl(home));
  const session = await store.createSession(db, { workspace });
  const turn = await store.createTurn(db, session.id, "do it");
  const approval = await store.createApproval(db, {
    sessionId: session.id,
    turnId: turn.id,
    toolCallId: "call_1",
    tool: "shell",
    args: JSON.stringify({ command: "touch x" }),
    description: "Run: touch x",
    riskLevel: "medium",
  });
  const log = new EventLog(db);
  await log.open(session.id);
  log.append(
    session.id,
    {
      type: "approval.requested",
      payload: {
        turnId: turn.id,
        approvalId: approval.id,
        toolCallId: "call_1",
        tool: "shell",
        args: { command: "touch x" },
        description: "Run: touch x",
        riskLevel: "medium",
        kind: "tool",
      },
    },
    turn.id,
  );
  await log.close();
  await db.$disconnect();

  const bridge = await startApprovalBridge(fake.url, { home });
  try {
    expect(await bridge.pending()).toEqual([]);
    const interrupted = (await (await bridge.api("/api/v1/approvals?status=interrupted")).json()) as {
      approval_id: string;
      decided_by: string;
    }[];
    expect(interrupted).toEqual([expect.objectContaining({ approval_id: approval.id, decided_by: "bridge restart" })]);
    const events = await bridge.events(session.id);
    const decided = events.find((event) => event.type === "approval.decided");
    expect(decided?.payload).toMatchObject({ approvalId: approval.id, status: "interrupted", toolCallId: "call_1" });
    // The request is settled before the turn's own interruption is recorded.
    const completed = events.findIndex((event) => event.type === "turn.completed");
    expect(completed).toBeGreaterThan(events.indexOf(decided!));
    const late = await bridge.api(`/api/v1/approvals/${approval.id}`, { body: { decision: "allow_once" } });
    expect(late.status).toBe(409);
  } finally {
    await bridge.stop();
  }
});
