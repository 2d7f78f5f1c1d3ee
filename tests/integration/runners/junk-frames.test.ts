import { io, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestBridge, waitFor, type TestBridge } from "../helpers";
import { startRunner, tempDir, type RunnerProcess } from "./support";

/**
 * A hostile runner (SECURITY.md, "What a runner reaches"): a real runner socket, enrolled, that sends
 * thousands of frames the hub refuses. The hub's log stays bounded, the connection that keeps sending
 * malformed frames is closed, and another runner keeps serving.
 */

let hub: TestBridge;
let steady: RunnerProcess;
let steadyRoot: string;
const logged: string[] = [];

beforeAll(async () => {
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    logged.push(...String(chunk).split("\n").filter(Boolean));
    return true;
  });
  hub = await startTestBridge();
  steadyRoot = await tempDir("wl-junk-steady-root-");
  steady = startRunner({
    hub: hub.url,
    token: await hub.services.runners!.add("steady"),
    home: await tempDir("wl-junk-steady-home-"),
    roots: [steadyRoot],
  });
  await steady.connected();
}, 90_000);

afterAll(async () => {
  steady?.child.kill("SIGKILL");
  await hub?.stop();
  vi.restoreAllMocks();
});

async function hostileRunner(): Promise<Socket> {
  const root = await tempDir("wl-junk-root-");
  const socket = io(hub.url, {
    path: "/runner.io/",
    transports: ["websocket"],
    auth: { token: await hub.services.runners!.add("junk"), roots: [root], instance: "junk-instance", version: "x" },
    reconnection: false,
  });
  await new Promise<void>((resolve, reject) => {
    socket.on("runner.welcome", () => resolve());
    socket.on("connect_error", reject);
  });
  return socket;
}

describe("a runner sending junk frames", () => {
  it("gets a bounded share of the hub's log and is disconnected; other runners are unaffected", async () => {
    const junk = await hostileRunner();
    const closed = new Promise<string>((resolve) => junk.on("disconnect", (reason) => resolve(reason)));

    // Well-formed, but answers to requests the hub never sent: refused, and logged only up to a budget.
    for (let i = 0; i < 500; i++) junk.emit("runner.response", { id: `never-sent-${i}`, ok: true, result: null });
    // Then frames no schema accepts, of every kind.
    const junkFrames: [string, unknown][] = [
      ["runner.response", { garbage: [1, 2, 3] }],
      ["runner.output", { processId: 42 }],
      ["runner.exit", "not an object"],
      ["runner.pty_data", { ptyId: "p", data: "not bytes" }],
      ["runner.pty_exit", null],
      ["runner.files_changed", { root: "relative", paths: [1] }],
    ];
    for (let i = 0; i < 3_000; i++) {
      const [event, frame] = junkFrames[i % junkFrames.length];
      if (junk.connected) junk.emit(event, frame);
    }

    const reason = await Promise.race([
      closed,
      new Promise<string>((resolve) => setTimeout(() => resolve("still connected after 15 s"), 15_000)),
    ]);
    expect(reason).toBe("io server disconnect");
    const aboutJunk = logged.filter((line) => line.includes('runner "junk"'));
    expect(aboutJunk.some((line) => /SECURITY: runner "junk" sent more than \d+ malformed frames/.test(line))).toBe(
      true,
    );
    // 3,500 refused frames; a handful of lines (its budget, the SECURITY line, connect and disconnect).
    expect(aboutJunk.length, aboutJunk.join("\n")).toBeLessThanOrEqual(16);

    // The other runner is still connected and serving.
    const runners = async () =>
      (await (await hub.api("/api/v1/runners")).json()) as { name: string; connected: boolean }[];
    await waitFor(
      async () => (await runners()).find((runner) => runner.name === "junk")?.connected === false || null,
      5_000,
      "the hub to list the junk runner as disconnected",
    );
    expect((await runners()).find((runner) => runner.name === "steady")?.connected).toBe(true);
    const folders = await hub.api("/api/v1/runners/steady/folders");
    expect(folders.status).toBe(200);
    expect(((await folders.json()) as { path: string }).path).toBe(steadyRoot);
    expect(logged.filter((line) => line.includes('runner "steady"') && line.includes("refused"))).toEqual([]);
  }, 60_000);
});
