import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { AgentTool } from "../../../server/agent";
import { TEST_POSTGRES } from "../../db";
import { startFakeLlm } from "../../fake-llm/server";
import type { FakeLlm } from "../../fake-llm/types";
import { readSse, waitFor } from "../helpers";
import { startApprovalBridge, type ApprovalBridge } from "./support";

/**
 * The approval gate while the store does not answer: another process holds the SQLite database's
 * write lock (in WAL mode reads still go through; writes are refused) longer than the adapter's
 * own busy budget (server/store/sqlite-adapter.ts, 5 s), so the fault reaches the durable writer.
 */
const LOCK_MS = 7_000;

let fake: FakeLlm;
let bridge: ApprovalBridge;

/** Another process (the sqlite3 shell) takes the database's write lock and holds it for `ms`. */
async function holdLock(ms: number): Promise<{ released: Promise<void> }> {
  const file = path.join(bridge.home, "worldline.db");
  const holder = spawn("sqlite3", [file], { stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  holder.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  const exited = new Promise<void>((resolve) => holder.once("exit", () => resolve()));
  holder.stdin.write(".bail on\n.timeout 5000\nBEGIN EXCLUSIVE;\nSELECT 'locked';\n");
  await waitFor(() => out.includes("locked\n"), 10_000, "the lock");
  setTimeout(() => holder.stdin.end(), ms); // the shell exits and its lock goes with it
  return { released: exited };
}

/** A tool that needs approval, and has the database locked just before the gate asks for it. */
const probe: AgentTool = {
  name: "probe",
  description: "Probes the store.",
  jsonSchema: { type: "object", properties: {} },
  async needsApproval() {
    await holdLock(LOCK_MS);
    return { level: "ask", subject: "probe", scope: "probe", description: "probe the store", risk: "medium" };
  },
  async run() {
    return { output: "probed", isError: false };
  },
};

beforeAll(async () => {
  fake = await startFakeLlm();
  bridge = await startApprovalBridge(fake.url, { tools: () => [probe] });
});

afterAll(async () => {
  await bridge?.stop();
  await fake?.close();
});

// The fault is SQLite's lock; PostgreSQL outages are the fault suite's (tests/faults/team.test.ts).
it.skipIf(Boolean(TEST_POSTGRES))(
  "a tool call during an outage waits at the gate and says why; a decision during one is a 503, then goes through",
  async () => {
    const sessionId = await bridge.createSession({ yolo: false });
    fake.script({ toolCalls: [{ name: "probe", arguments: {} }] }, { text: "Probed." });
    const stream = bridge.api("/api/v1/chat/stream", { body: { session_id: sessionId, message: "probe" } });

    // The request's row waited for the lock instead of failing the call.
    const request = await waitFor(async () => (await bridge.pending())[0], 30_000, "the approval request");
    expect(request).toMatchObject({ session_id: sessionId, tool: "probe", status: "pending" });

    // A decision while the store is locked: refused as unavailable within seconds, nothing decided.
    const { released } = await holdLock(LOCK_MS);
    const started = Date.now();
    const refused = await bridge.api(`/api/v1/approvals/${request.approval_id}`, {
      body: { decision: "allow_once" },
    });
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("store:unavailable");
    expect(Date.now() - started).toBeLessThan(LOCK_MS + 3_000);
    await released;
    const decided = await bridge.api(`/api/v1/approvals/${request.approval_id}`, {
      body: { decision: "allow_once" },
    });
    expect(decided.status).toBe(200);

    // The stream ends at the request (a client resumes with /tasks/:id/continue/stream); the turn goes on.
    expect((await readSse(await stream)).at(-1)?.event).toBe("tool_approval_requested");
    expect(await bridge.turnCompleted(sessionId)).toMatchObject({ outcome: "completed" });
    const log = await bridge.events(sessionId);
    const notices = log.filter((e) => e.type === "notice").map((e) => String(e.payload.text));
    expect(notices).toContain("Database locked by another process, retrying…");
    expect(notices.some((text) => text.startsWith("The database answers again"))).toBe(true);
    const probed = log.find((e) => e.type === "tool.state" && e.payload.state !== "running");
    expect(probed?.payload).toMatchObject({ state: "completed", output: "probed" });
    expect(log.filter((e) => e.type === "turn.completed").map((e) => e.payload.outcome)).toEqual(["completed"]);
  },
  60_000,
);
