import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TerminalInfo } from "../../../server/protocol";
import { emitCommand, startTestBridge, uniqueId, waitFor, type TestBridge } from "../helpers";
import { hold } from "../../support/wait";
import { PtyViewer } from "../pty/pty-client";
import { freePort } from "../../support/ports";
import { startCuttableProxy, startRunner, tempDir, type CuttableProxy, type RunnerProcess } from "./support";

describe("terminals on a runner", () => {
  let hub: TestBridge;
  let proxy: CuttableProxy;
  let runner: RunnerProcess;
  let root: string;
  let sessionId: string;

  beforeAll(async () => {
    // The runner dials the hub through a proxy on its own port: the hub allows that Host (/runner.io/ checks it).
    const proxyPort = await freePort();
    hub = await startTestBridge({ env: { WORLDLINE_ALLOWED_HOSTS: `127.0.0.1:${proxyPort}` } });
    proxy = await startCuttableProxy(hub.port, proxyPort);
    root = await tempDir("wl-runner-pty-root-");
    const token = await hub.services.runners!.add("shellbox");
    runner = startRunner({ hub: proxy.url, token, home: await tempDir("wl-runner-pty-home-"), roots: [root] });
    await runner.connected();
    const response = await hub.api("/api/v1/sessions", { body: { workspace: root, runner: "shellbox" } });
    sessionId = ((await response.json()) as { id: string }).id;
  }, 60_000);

  afterAll(async () => {
    runner?.child.kill("SIGKILL");
    await proxy?.close();
    await hub?.stop();
  });

  it("opens the shell on the runner, keeps it running through a dropped connection and replays what it wrote meanwhile", async () => {
    const socket = await hub.socket();
    const terminal = await emitCommand<TerminalInfo>(socket, "pty.create", {
      commandId: uniqueId(),
      sessionId,
      cols: 100,
      rows: 30,
    });
    const viewer = new PtyViewer(socket, sessionId, terminal.terminalId, { cols: 100, rows: 30 });
    await viewer.attach();
    viewer.input("echo where=$(pwd) runner=$WORLDLINE_HOME; echo m-$((40+2))\r");
    await waitFor(() => viewer.text().includes("m-42"), 20_000, "the first command's output");
    expect(viewer.text()).toContain(`where=${root} runner=${runner.home}`);

    // Output written while the runner cannot reach the hub arrives, in order, once it is back.
    // The line reaches the runner (its first echo comes back) before the connection is cut; what it writes a second later cannot.
    viewer.input("echo cut-$((3+3)); sleep 1; echo away-$((1+1)); echo still-$((2+2))\r");
    await waitFor(() => viewer.text().includes("cut-6"), 20_000, "the line to start on the runner");
    proxy.cut();
    await waitFor(
      async () => !(await hub.services.runners!.list())[0].connected,
      10_000,
      "the hub to see the runner go",
    );
    await hold(2_500, "a quiet window: the line written a second after the cut must not arrive while away");
    expect(viewer.text()).not.toContain("away-2");
    proxy.restore();
    await runner.connected(2, 30_000);
    await waitFor(() => viewer.text().includes("still-4"), 20_000, "the output written while away");
    expect(viewer.text().indexOf("away-2")).toBeLessThan(viewer.text().indexOf("still-4"));

    // A viewer that attaches now gets it in the replay.
    const late = new PtyViewer(await hub.socket(), sessionId, terminal.terminalId, { cols: 100, rows: 30 });
    await late.attach();
    await waitFor(async () => (await late.screen()).join("\n").includes("still-4"), 10_000, "the replay");

    const closed = await emitCommand<{ exitCode: number | null }>(socket, "pty.close", {
      commandId: uniqueId(),
      sessionId,
      terminalId: terminal.terminalId,
    });
    expect(closed).toHaveProperty("exitCode");
    viewer.dispose();
    late.dispose();
  }, 90_000);
});
