import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtinTools, sharedTaskRegistry } from "../../../server/tools";
import { SessionPorts, type SessionPort } from "../../../server/protocol";
import { startTestBridge, type TestBridge } from "../helpers";
import { freePort } from "../../support/ports";
import { waitFor } from "../../support/wait";
import { DEV_SERVER } from "../preview/support";
import { startRunner, tempDir, type RunnerProcess } from "./support";

/** Previews of a session on a runner: its ports, read by the runner, and the proxy through the runner's link. */
let hub: TestBridge;
let runner: RunnerProcess;
let root: string;
let sessionId: string;
let devPort: number;
let pythonPort: number;

async function ports(): Promise<SessionPort[]> {
  const response = await hub.api(`/api/v1/sessions/${sessionId}/ports`);
  expect(response.status).toBe(200);
  return SessionPorts.parse(await response.json());
}

beforeAll(async () => {
  hub = await startTestBridge();
  root = await tempDir("wl-runner-preview-root-");
  const token = await hub.services.runners!.add("previewbox");
  runner = startRunner({ hub: hub.url, token, home: await tempDir("wl-runner-preview-home-"), roots: [root] });
  await runner.connected();
  const created = await hub.api("/api/v1/sessions", { body: { workspace: root, runner: "previewbox" } });
  sessionId = ((await created.json()) as { id: string }).id;
  devPort = await freePort();
  pythonPort = await freePort();
  // The dev server runs in one of the session's terminals, on the runner's machine.
  const terminal = await hub.services.ptys.create(sessionId);
  hub.services.ptys.get(sessionId, terminal.terminalId).input(null, `node ${DEV_SERVER} ${devPort}\r`);
  // Python's server runs as the agent's background shell task, on the runner too.
  await fs.writeFile(path.join(root, "big.bin"), Buffer.alloc(3 * 1024 * 1024, "abcdefgh"));
  const shell = builtinTools().find((tool) => tool.name === "shell")!;
  const started = await shell.run(
    { command: `python3 -m http.server ${pythonPort} --bind 127.0.0.1`, background: true },
    {
      cwd: root,
      sessionId,
      toolCallId: "call_py",
      signal: new AbortController().signal,
      emit: () => {},
      host: hub.services.hosts.of("previewbox"),
    },
  );
  expect(started.isError).toBe(false);
}, 60_000);

afterAll(async () => {
  await sharedTaskRegistry.stopSession(sessionId);
  runner?.child.kill("SIGKILL");
  await hub?.stop();
}, 60_000);

describe("ports of a session on a runner", () => {
  it("lists the ports its terminal and shell task listen on, as the runner reads them", async () => {
    const listed = await waitFor(
      async () => {
        const list = await ports();
        return list.some((p) => p.port === devPort) && list.some((p) => p.port === pythonPort) ? list : null;
      },
      20_000,
      "both dev servers to listen on the runner",
    );
    const dev = listed.find((p) => p.port === devPort)!;
    expect(dev.command).toContain("dev-server.mjs");
    expect(dev.pid).toBeGreaterThan(1);
    expect(dev.url).toBe(`http://p${devPort}-${sessionId}.localhost:${hub.port}/`);
    expect(listed.find((p) => p.port === pythonPort)!.command).toContain("http.server");
    // The hub's own port (and the runner's own connection) are not the session's.
    expect(listed.some((p) => p.port === hub.port)).toBe(false);
  });

  it("tells a watching socket about a port that opens on the runner", async () => {
    const socket = await hub.socket();
    const changes: SessionPort[][] = [];
    socket.on("ports.changed", (message: { sessionId: string; ports: SessionPort[] }) => changes.push(message.ports));
    expect((await socket.emitWithAck("ports.watch", { sessionId })).ok).toBe(true);
    const extra = await freePort();
    const terminal = await hub.services.ptys.create(sessionId);
    hub.services.ptys.get(sessionId, terminal.terminalId).input(null, `node ${DEV_SERVER} ${extra}\r`);
    await waitFor(() => changes.some((list) => list.some((p) => p.port === extra)), 20_000, "ports.changed");
    await hub.services.ptys.close(sessionId, terminal.terminalId);
    await waitFor(() => changes.at(-1)?.every((p) => p.port !== extra), 10_000, "the closed port to leave");
    socket.disconnect();
  });

  it("names only processes the runner started: a pid the hub made up is not looked at", async () => {
    const listed = await hub.services.runners!.previews.ports("previewbox", [{ pid: process.pid, kind: "group" }]);
    expect(listed).toEqual([]);
  });
});
