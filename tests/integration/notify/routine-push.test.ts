import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RoutineRunView } from "../../../server/protocol";
import { startFakeLlm } from "../../fake-llm/server";
import type { FakeLlm } from "../../fake-llm/types";
import { startTestBridge, waitFor, type TestBridge } from "../helpers";
import { PushService } from "./push-service";

/**
 * A routine run's end reaches its owner's devices (server/routines `onEnded` → the notifier's
 * `routineRun`): a run that finishes as `routine.completed`, one whose turn fails as
 * `routine.failed`, each decrypted by the loopback push service and pushed once per device.
 */
let fake: FakeLlm;
let pushService: PushService;
let bridge: TestBridge;

/** Waits are generous: this machine is often loaded, and a wait ends as soon as its condition holds. */
const WAIT_MS = 60_000;

beforeAll(async () => {
  fake = await startFakeLlm();
  pushService = await new PushService().start();
  bridge = await startTestBridge({ llmUrl: fake.url });
  const phone = pushService.device("routine-phone");
  const subscribed = await bridge.api("/api/v1/push/subscriptions", {
    body: { endpoint: phone.endpoint, expirationTime: null, keys: phone.keys, device: "Phone" },
  });
  expect(subscribed.status).toBe(201);
});
afterEach(() => fake.reset());
afterAll(async () => {
  await bridge.stop();
  await pushService.close();
  await fake.close();
});

async function json<T>(pathname: string, init?: { method?: string; body?: unknown }): Promise<T> {
  const response = await bridge.api(pathname, init);
  if (!response.ok) throw new Error(`${pathname}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** Makes a routine and fires it with its own token, as a webhook would; the run's session. */
async function fireRoutine(name: string): Promise<{ routineId: string; sessionId: string }> {
  const { id, token } = await json<{ id: string; token: string }>("/api/v1/routines", {
    body: { name, prompt: "Check the build.", isolation: "none", workspace: bridge.workspace },
  });
  const fired = await fetch(`${bridge.url}/api/v1/routines/${id}/fire`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
  });
  expect(fired.status).toBe(202);
  const { session_id } = (await fired.json()) as { session_id: string };
  return { routineId: id, sessionId: session_id };
}

/** The routine notices the phone got for a session (turn notices aside). */
function routineNotices(sessionId: string): Record<string, unknown>[] {
  return pushService
    .of("routine-phone")
    .filter((notice) => notice.session_id === sessionId && String(notice.type).startsWith("routine."));
}

async function endedRun(routineId: string): Promise<RoutineRunView> {
  return waitFor(
    async () => (await json<RoutineRunView[]>(`/api/v1/routines/${routineId}/runs`)).find((run) => run.ended_at),
    WAIT_MS,
    "the run's end",
  );
}

describe("routine runs on the owner's devices", { timeout: 180_000 }, () => {
  it("pushes a finished run as routine.completed, once, with the routine's name and no token", async () => {
    fake.script({ text: "The build is green." });
    const { routineId, sessionId } = await fireRoutine("nightly-build");
    const notice = await waitFor(() => routineNotices(sessionId)[0], WAIT_MS, "the run's push");
    expect(notice).toEqual({
      type: "routine.completed",
      session_id: sessionId,
      title: "nightly-build (fire)",
      summary: "nightly-build: The run finished.",
    });
    expect((await endedRun(routineId)).outcome).toBe("completed");
    await bridge.services.push!.idle();
    expect(routineNotices(sessionId)).toHaveLength(1);
    // The session's own turn end is pushed too, as any turn's is.
    expect(
      pushService
        .of("routine-phone")
        .filter((n) => n.session_id === sessionId)
        .map((n) => n.type),
    ).toContain("turn.completed");
  });

  it("pushes a run whose turn failed as routine.failed", async () => {
    fake.script({ status: 400, body: { error: { message: "model exploded" } } });
    const { routineId, sessionId } = await fireRoutine("nightly-broken");
    const notice = await waitFor(() => routineNotices(sessionId)[0], WAIT_MS, "the failed run's push");
    expect(notice).toMatchObject({
      type: "routine.failed",
      session_id: sessionId,
      title: "nightly-broken (fire)",
      summary: "nightly-broken: The run failed.",
    });
    expect(notice.action_token).toBeUndefined();
    const run = await endedRun(routineId);
    expect(run.outcome).not.toBe("completed");
    await bridge.services.push!.idle();
    expect(routineNotices(sessionId)).toHaveLength(1);
  });

  it("pushes a run that failed before it had a session (its folder gone), opening the Routines page", async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), "wl-routine-gone-"));
    const { id, token } = await json<{ id: string; token: string }>("/api/v1/routines", {
      body: { name: "weekly-gone", prompt: "Tidy up.", isolation: "none", workspace: folder },
    });
    fs.rmSync(folder, { recursive: true, force: true });
    const fired = await fetch(`${bridge.url}/api/v1/routines/${id}/fire`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
    });
    expect(fired.status).toBe(202);
    expect(((await fired.json()) as { session_id?: string }).session_id).toBeUndefined();
    const ofRun = () =>
      pushService.of("routine-phone").filter((notice) => String(notice.summary).startsWith("weekly-gone:"));
    const notice = await waitFor(() => ofRun()[0], WAIT_MS, "the push of the run that never started");
    expect(notice).toMatchObject({ type: "routine.failed", session_id: "", url: "/routines" });
    expect(String(notice.summary)).not.toBe("weekly-gone: The run failed."); // it says why
    expect((await endedRun(id)).outcome).toBe("failed");
    await bridge.services.push!.idle();
    expect(ofRun()).toHaveLength(1);
  });
});
