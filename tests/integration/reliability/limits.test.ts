import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { MAX_CONCURRENT_TURNS, MAX_QUEUED_TURNS_PER_SESSION } from "../../../server/agent/runtime";
import { MAX_TERMINALS_PER_SESSION } from "../../../server/pty/limits";
import { createShellTool, TaskRegistry } from "../../../server/tools";
import {
  MAX_FINISHED_TASKS_PER_SESSION,
  MAX_RUNNING_TASKS,
  MAX_RUNNING_TASKS_PER_SESSION,
} from "../../../server/tools/shell/tasks";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { fakeCtx, makeWorkspace } from "../../unit/tools/support";
import { emitCommand, startTestBridge, type TestBridge } from "../helpers";

/** Per-session and global limits on terminals, background tasks and turns. */
describe("background task limits", () => {
  let env: Awaited<ReturnType<typeof makeWorkspace>>;
  let tasks: TaskRegistry;
  beforeAll(async () => {
    env = await makeWorkspace();
  });
  afterEach(async () => tasks.stopAll());
  afterAll(async () => env.cleanup());

  const start = (shell: ReturnType<typeof createShellTool>, sessionId: string, command = "sleep 30") =>
    shell.run({ command, background: true }, fakeCtx(env.ws, { sessionId, toolCallId: `call-${Math.random()}` }));

  it(`refuses a running task beyond ${MAX_RUNNING_TASKS_PER_SESSION} in a session, not in another session`, async () => {
    tasks = new TaskRegistry();
    const shell = createShellTool({ tasks, killGraceMs: 100 });
    for (let i = 0; i < MAX_RUNNING_TASKS_PER_SESSION; i++) expect((await start(shell, "a")).isError).toBe(false);
    const refused = await start(shell, "a");
    expect(refused).toMatchObject({ isError: true });
    expect(refused.output).toMatch(/tools:busy.*background tasks/);
    expect((await start(shell, "b")).isError).toBe(false);
  });

  it(`refuses a running task beyond ${MAX_RUNNING_TASKS} on the bridge`, async () => {
    tasks = new TaskRegistry();
    const shell = createShellTool({ tasks, killGraceMs: 100 });
    const sessions = Math.ceil(MAX_RUNNING_TASKS / MAX_RUNNING_TASKS_PER_SESSION);
    let started = 0;
    for (let s = 0; s < sessions; s++) {
      for (let i = 0; i < MAX_RUNNING_TASKS_PER_SESSION && started < MAX_RUNNING_TASKS; i++, started++) {
        expect((await start(shell, `s${s}`)).isError).toBe(false);
      }
    }
    const refused = await start(shell, "fresh");
    expect(refused.output).toMatch(/bridge already runs/);
  }, 60_000);

  it("forgets old finished tasks so a long session's memory stays bounded", async () => {
    tasks = new TaskRegistry();
    const shell = createShellTool({ tasks, killGraceMs: 100 });
    for (let i = 0; i < MAX_FINISHED_TASKS_PER_SESSION + 10; i++) {
      expect((await start(shell, "long", `echo ${i}`)).isError).toBe(false);
      await Promise.all(tasks.list("long").map((task) => task.done));
    }
    expect(tasks.list("long").length).toBeLessThanOrEqual(MAX_FINISHED_TASKS_PER_SESSION);
  });
});

describe("terminal and turn limits", () => {
  let fake: FakeLlm;
  let bridge: TestBridge;
  beforeAll(async () => {
    fake = await startFakeLlm();
    bridge = await startTestBridge({ llmUrl: fake.url });
  });
  afterAll(async () => {
    await bridge.stop();
    await fake.close();
  });

  const newSession = async () =>
    ((await (await bridge.api("/api/v1/sessions", { body: { workspace: bridge.workspace } })).json()) as { id: string })
      .id;

  it(`refuses a terminal beyond ${MAX_TERMINALS_PER_SESSION} in a session`, async () => {
    const socket = await bridge.socket();
    const sessionId = await newSession();
    for (let i = 0; i < MAX_TERMINALS_PER_SESSION; i++)
      await emitCommand(socket, "pty.create", { commandId: `cmd-pty-${i}-000`, sessionId });
    await expect(emitCommand(socket, "pty.create", { commandId: "cmd-pty-over-0", sessionId })).rejects.toMatchObject({
      code: "pty:busy",
    });
    await bridge.services.ptys.closeAll();
  }, 60_000);

  it(`runs at most ${MAX_CONCURRENT_TURNS} turns at once and queues at most ${MAX_QUEUED_TURNS_PER_SESSION} per session`, async () => {
    const { runtime } = bridge.services;
    fake.script(...Array.from({ length: MAX_CONCURRENT_TURNS }, () => ({ hang: true as const })));
    const sessions: string[] = [];
    for (let i = 0; i < MAX_CONCURRENT_TURNS; i++) {
      const sessionId = await newSession();
      sessions.push(sessionId);
      expect((await runtime.prompt(sessionId, `hang ${i}`)).queued).toBe(false);
    }
    const extra = await newSession();
    await expect(runtime.prompt(extra, "one too many")).rejects.toMatchObject({ code: "runtime:at_capacity" });
    // Prompts behind a running turn queue (they don't add to what runs), up to the limit.
    for (let i = 0; i < MAX_QUEUED_TURNS_PER_SESSION; i++)
      expect((await runtime.prompt(sessions[0], `queued ${i}`)).queued).toBe(true);
    await expect(runtime.prompt(sessions[0], "queue overflow")).rejects.toMatchObject({ code: "session:busy" });
    // Over the socket the refusal is a clear error ack.
    const socket = await bridge.socket();
    await expect(
      emitCommand(socket, "turn.prompt", { commandId: "cmd-over-limit-1", sessionId: extra, text: "again" }),
    ).rejects.toMatchObject({ code: "runtime:at_capacity" });
    // Over HTTP it is a 429 with Retry-After, and health shows the bridge full.
    const refused = await bridge.api("/api/v1/chat/stream", { body: { message: "again", session_id: extra } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("5");
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("runtime:at_capacity");
    const health = (await (await fetch(`${bridge.url}/api/v1/health`)).json()) as { turns: unknown };
    expect(health.turns).toEqual({ running: MAX_CONCURRENT_TURNS, capacity: MAX_CONCURRENT_TURNS });
    await runtime.cancelAll();
    fake.reset();
  }, 60_000);
});
