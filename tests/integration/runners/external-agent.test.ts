import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSse, startTestBridge, waitFor, type TestBridge } from "../helpers";
import { startRunner, tempDir, type RunnerProcess } from "./support";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const WHERE_AGENT = path.join(ROOT, "tests/integration/runners/fixtures/where-agent.mjs");
const AGENT_COMMAND = `${JSON.stringify(process.execPath)} ${JSON.stringify(WHERE_AGENT)}`;

type Event = { type: string; payload: any };

/** How long the hub waits for a runner that went away (server/runners), short for the test. */
const GRACE_MS = 2_000;

/** The parent of a process, from /proc, or undefined once it is gone. */
async function parentOf(pid: number): Promise<number | undefined> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  if (!stat) return undefined;
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

/** True while the process runs (a zombie has ended). */
async function running(pid: number): Promise<boolean> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  return stat !== undefined && !/^[ZX]$/.test(stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3));
}

/** A session whose external ACP agent (`agentCommand`) runs on a runner, with its files and terminals there. */
describe("an external agent of a runner session", () => {
  let hub: TestBridge;
  let root: string;
  let runner: RunnerProcess;

  let token: string;

  async function session(folder: string): Promise<string> {
    const workspace = path.join(root, folder);
    await fs.mkdir(workspace);
    const created = await hub.api("/api/v1/sessions", {
      body: { workspace, runner: "delta", agentCommand: AGENT_COMMAND },
    });
    expect(created.status).toBe(201);
    return ((await created.json()) as { id: string }).id;
  }

  async function turn(sessionId: string, message: string): Promise<Event[]> {
    const response = await hub.api("/api/v1/chat/stream", { body: { message, session_id: sessionId } });
    expect(response.status).toBe(200);
    await readSse(response);
    return (await (await hub.api(`/api/v1/sessions/${sessionId}/events?after=0`)).json()) as Event[];
  }

  beforeAll(async () => {
    process.env.WORLDLINE_RUNNER_GRACE_MS = String(GRACE_MS);
    hub = await startTestBridge();
    root = await tempDir("wl-runner-delta-root-");
    token = await hub.services.runners!.add("delta");
    runner = startRunner({ hub: hub.url, token, home: await tempDir("wl-runner-delta-home-"), roots: [root] });
    await runner.connected();
  }, 90_000);

  afterAll(async () => {
    delete process.env.WORLDLINE_RUNNER_GRACE_MS;
    runner?.child.kill("SIGKILL");
    await hub?.stop();
  });

  it("runs on the runner: its process, its file writes and reads, and its terminals; deleting the session ends it there", async () => {
    const workspace = path.join(root, "agent-project");
    await fs.mkdir(workspace);
    const created = await hub.api("/api/v1/sessions", {
      body: { workspace, runner: "delta", agentCommand: AGENT_COMMAND },
    });
    expect(created.status).toBe(201);
    const sessionId = ((await created.json()) as { id: string }).id;

    const response = await hub.api("/api/v1/chat/stream", {
      body: { message: "where are you?", session_id: sessionId },
    });
    expect(response.status).toBe(200);
    await readSse(response);
    const events = (await (await hub.api(`/api/v1/sessions/${sessionId}/events?after=0`)).json()) as Event[];
    expect(events.filter((event) => event.type === "turn.error")).toEqual([]);
    expect(events.find((event) => event.type === "turn.completed")?.payload.outcome).toBe("completed");
    const report = events
      .filter((event) => event.type === "message.part.delta" && event.payload.part === "text")
      .map((event) => event.payload.delta as string)
      .join("");
    const [where, read, outside, terminal] = report.split("\n");

    // The agent process: in the workspace, with the runner's environment, a descendant of the runner's process.
    const pid = Number(/ pid=(\d+)$/.exec(where)?.[1]);
    expect(where).toBe(`cwd=${workspace} home=${runner.home} pid=${pid}`);
    const ancestors: number[] = [];
    for (let at = await parentOf(pid); at !== undefined && at > 1; at = await parentOf(at)) ancestors.push(at);
    expect(ancestors).toContain(runner.child.pid);
    // Its write landed in the runner's workspace and read back from there; one outside the workspace was refused.
    expect(await fs.readFile(path.join(workspace, "where.txt"), "utf8")).toBe(`${where}\n`);
    expect(read).toBe(`read=${where}`);
    expect(outside).toMatch(/^outside=refused: .*inside the session's workspace only/);
    await expect(fs.stat(path.join(root, "outside.txt"))).rejects.toThrow();
    // Its terminal ran on the runner too, in the workspace, with the runner's environment.
    expect(terminal).toBe(`terminal=${workspace} ${runner.home} exit=0`);

    const summary = (await (await hub.api(`/api/v1/sessions/${sessionId}`)).json()) as {
      runner: string | null;
      usage: { input_tokens: number; output_tokens: number };
    };
    expect(summary.runner).toBe("delta");
    expect(summary.usage).toMatchObject({ input_tokens: 100, output_tokens: 7 });

    expect(await running(pid)).toBe(true);
    const deleted = await hub.api(`/api/v1/sessions/${sessionId}`, { method: "DELETE" });
    expect(deleted.ok).toBe(true);
    await waitFor(async () => !(await running(pid)), 10_000, "the agent on the runner to end");
  });

  it("ends a turn whose runner vanished after the grace, and starts a fresh agent there once it is back", async () => {
    const sessionId = await session("vanishing");
    const response = hub.api("/api/v1/chat/stream", { body: { message: "wait", session_id: sessionId } });
    await waitFor(
      async () => {
        const events = (await (await hub.api(`/api/v1/sessions/${sessionId}/events?after=0`)).json()) as Event[];
        return events.some((event) => event.type === "message.part.delta");
      },
      20_000,
      "the agent to start waiting",
    );
    const killedAt = Date.now();
    runner.child.kill("SIGKILL");
    await readSse(await response);
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(GRACE_MS - 100);
    const events = (await (await hub.api(`/api/v1/sessions/${sessionId}/events?after=0`)).json()) as Event[];
    const failed = events.find((event) => event.type === "turn.error");
    expect(failed?.payload.code).toBe("acp:agent_failed");
    expect(failed?.payload.message).toContain('The runner "delta" disconnected and did not come back within 2 s');
    expect(events.find((event) => event.type === "turn.completed")?.payload.outcome).toBe("error");

    runner = startRunner({ hub: hub.url, token, home: runner.home, roots: [root] });
    await runner.connected();
    const again = await turn(sessionId, "where are you now?");
    const where = again
      .filter((event) => event.type === "message.part.delta" && event.payload.part === "text")
      .map((event) => event.payload.delta as string)
      .join("");
    expect(where).toContain(`cwd=${path.join(root, "vanishing")} home=${runner.home}`);
  }, 90_000);
});
