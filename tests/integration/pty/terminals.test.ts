import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { terminalMembers } from "../../../server/processes";
import type { TerminalInfo } from "../../../server/protocol";
import { emitCommand, startTestBridge, uniqueId, waitFor, type TestBridge } from "../helpers";
import { markerScanner, PtyViewer } from "./pty-client";

let bridge: TestBridge;
let sessionId: string;

beforeAll(async () => {
  bridge = await startTestBridge();
  const response = await bridge.api("/api/v1/sessions", { body: { workspace: bridge.workspace } });
  sessionId = ((await response.json()) as { id: string }).id;
});

afterAll(async () => {
  await bridge.stop();
});

function allLines(viewer: PtyViewer): string[] {
  const buffer = viewer.term?.buffer.active;
  if (!buffer) return [];
  return Array.from({ length: buffer.length }, (_, y) => buffer.getLine(y)?.translateToString(true) ?? "");
}

async function openTerminal(socket: Awaited<ReturnType<TestBridge["socket"]>>, title?: string): Promise<TerminalInfo> {
  return emitCommand<TerminalInfo>(socket, "pty.create", {
    commandId: uniqueId(),
    sessionId,
    title,
    cols: 100,
    rows: 30,
  });
}

async function closeTerminal(
  socket: Awaited<ReturnType<TestBridge["socket"]>>,
  terminalId: string,
): Promise<{ exitCode: number | null }> {
  return emitCommand(socket, "pty.close", { commandId: uniqueId(), sessionId, terminalId });
}

/** Types a command whose output contains `marker` once it ran (the echoed line doesn't: `$((…))` is expanded). */
function runAndMark(viewer: PtyViewer, command: string, tag: string): string {
  viewer.input(`${command}; echo ${tag}-$((40+2))\r`);
  return `${tag}-42`;
}

describe("terminals through socket.io", () => {
  it("opens a login shell in the workspace with TERM=xterm-256color, renames and closes it, with session events", async () => {
    const socket = await bridge.socket();
    const terminal = await openTerminal(socket, "build");
    const viewer = new PtyViewer(socket, sessionId, terminal.terminalId, { cols: 100, rows: 30 });
    await viewer.attach();
    const marker = runAndMark(viewer, 'echo "cwd=$(pwd) term=$TERM login=$(shopt -q login_shell && echo yes)"', "env");
    await waitFor(() => viewer.text().includes(marker), 10_000, "env output");
    expect(viewer.text()).toContain(`cwd=${bridge.workspace} term=xterm-256color login=yes`);

    const renamed = await emitCommand<TerminalInfo>(socket, "pty.rename", {
      commandId: uniqueId(),
      sessionId,
      terminalId: terminal.terminalId,
      title: "server",
    });
    expect(renamed.title).toBe("server");
    const listed = await emitCommand<{ terminals: TerminalInfo[] }>(socket, "pty.list", { sessionId });
    expect(listed.terminals.map((t) => t.title)).toContain("server");

    await closeTerminal(socket, terminal.terminalId);
    await waitFor(() => viewer.exitCode !== undefined, 5_000, "exit message");
    const events = (await (await bridge.api(`/api/v1/sessions/${sessionId}/events`)).json()) as {
      type: string;
      payload: { terminalId?: string };
    }[];
    const mine = events.filter((event) => event.payload.terminalId === terminal.terminalId).map((event) => event.type);
    expect(mine).toEqual(["terminal.opened", "terminal.renamed", "terminal.closed"]);
    viewer.dispose();
  });

  it("delivers a 50 MB cat byte-exact", async () => {
    const file = path.join(bridge.workspace, "big.txt");
    const line = "The quick brown fox jumps over the lazy dog 0123456789 ÄÖÜ €\n";
    const count = Math.ceil((50 * 1024 * 1024) / Buffer.byteLength(line));
    fs.writeFileSync(file, line.repeat(count));
    // The tty turns each \n into \r\n (onlcr).
    const expected = createHash("sha256")
      .update(Buffer.from(line.replace("\n", "\r\n").repeat(count)))
      .digest("hex");

    const socket = await bridge.socket();
    const terminal = await openTerminal(socket);
    const viewer = new PtyViewer(socket, sessionId, terminal.terminalId, { xterm: false });
    await viewer.attach();
    // The prompt may follow the marker in the same chunk, longer than any fixed tail window.
    const sawEnd = markerScanner("END-2");
    let ended = false;
    viewer.onData((chunk) => (ended ||= sawEnd(chunk)));
    const started = Date.now();
    viewer.input(`echo BEGIN-$((1+1)); cat big.txt; echo END-$((1+1))\r`);
    await waitFor(() => ended, 120_000, "the whole file");
    console.log(
      `50 MB cat through the bridge: ${(viewer.received / 1e6 / ((Date.now() - started) / 1000)).toFixed(1)} MB/s`,
    );
    const all = Buffer.concat(viewer.chunks);
    const start = all.indexOf("BEGIN-2\r\n") + "BEGIN-2\r\n".length;
    const end = all.indexOf("END-2", start);
    const body = all.subarray(start, end);
    expect(body.length).toBe(Buffer.byteLength(line.replace("\n", "\r\n")) * count);
    expect(createHash("sha256").update(body).digest("hex")).toBe(expected);
    await closeTerminal(socket, terminal.terminalId);
    viewer.dispose();
    fs.rmSync(file);
  }, 180_000);

  it("shows a second and a reconnecting viewer the same screen, and takes input from both", async () => {
    const first = await bridge.socket();
    const terminal = await openTerminal(first);
    const a = new PtyViewer(first, sessionId, terminal.terminalId, { cols: 100, rows: 30 });
    await a.attach();
    const marker = runAndMark(a, "printf '\\e[1;31mred\\e[0m plain\\n'; seq 1 50", "one");
    await waitFor(() => a.text().includes(marker), 10_000, "first output");

    const second = await bridge.socket();
    const b = new PtyViewer(second, sessionId, terminal.terminalId, { cols: 100, rows: 30 });
    await b.attach();
    await waitFor(() => b.snapshots === 1, 5_000, "snapshot");
    expect(await b.screen()).toEqual(await a.screen());
    expect(b.received).toBe(0); // Everything so far came in the snapshot, nothing twice.

    const marker2 = runAndMark(b, "echo from-b", "two");
    await waitFor(() => a.text().includes(marker2) && b.text().includes(marker2), 10_000, "input from b seen by both");
    const marker3 = runAndMark(a, "echo from-a", "three");
    await waitFor(() => a.text().includes(marker3) && b.text().includes(marker3), 10_000, "input from a seen by both");
    expect(await b.screen()).toEqual(await a.screen());

    // A reload: the socket goes away and a new one attaches.
    second.disconnect();
    const third = await bridge.socket();
    const c = new PtyViewer(third, sessionId, terminal.terminalId, { cols: 100, rows: 30 });
    await c.attach();
    await waitFor(() => c.snapshots === 1, 5_000, "snapshot after reconnect");
    expect(await c.screen()).toEqual(await a.screen());
    expect((await c.screen()).join("\n")).toContain("from-a");

    await closeTerminal(first, terminal.terminalId);
    for (const viewer of [a, b, c]) viewer.dispose();
  });

  it("keeps the snapshot and live output in order while output is flowing", async () => {
    const socket = await bridge.socket();
    const terminal = await openTerminal(socket);
    const a = new PtyViewer(socket, sessionId, terminal.terminalId, { cols: 100, rows: 30 });
    await a.attach();
    a.input("for i in $(seq 1 3000); do echo line-$i; done; echo DONE-$((1+1))\r");
    await waitFor(() => a.text().includes("line-500"), 10_000, "output started");
    const other = await bridge.socket();
    const b = new PtyViewer(other, sessionId, terminal.terminalId, { cols: 100, rows: 30 });
    await b.attach();
    await waitFor(() => a.text().includes("DONE-2"), 30_000, "loop done");
    await waitFor(async () => (await b.screen()).join("\n") === (await a.screen()).join("\n"), 5_000, "same screen");
    // Every line reached b exactly once: through the snapshot's scrollback or live, in order.
    const bLines = (b.term?.buffer.active ? allLines(b) : []).filter((line) => /^line-\d+$/.test(line));
    const numbers = bLines.map((line) => Number(line.slice(5)));
    expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => 3001 - numbers.length + i));
    await closeTerminal(socket, terminal.terminalId);
    a.dispose();
    b.dispose();
  });

  it("flushes trailing output before announcing the exit code", async () => {
    const socket = await bridge.socket();
    const terminal = await openTerminal(socket);
    const viewer = new PtyViewer(socket, sessionId, terminal.terminalId, { xterm: false });
    await viewer.attach();
    let textAtExit = "";
    socket.on("pty.exit", () => (textAtExit = viewer.text()));
    viewer.input("seq 1 20000 | tail -c 200000; printf 'last-words'; exit 3\r");
    await waitFor(() => viewer.exitCode !== undefined, 10_000, "exit");
    expect(viewer.exitCode).toBe(3);
    expect(textAtExit).toContain("20000\r\nlast-words");
    viewer.dispose();
  });

  it("kills the whole process tree on close, including jobs that ignore SIGTERM", async () => {
    const socket = await bridge.socket();
    const terminal = await openTerminal(socket);
    const viewer = new PtyViewer(socket, sessionId, terminal.terminalId, { xterm: false });
    await viewer.attach();
    viewer.input("sleep 1000 & bash -c 'trap \"\" TERM HUP; sleep 1000' & echo STARTED-$((1+1))\r");
    await waitFor(() => viewer.text().includes("STARTED-2"), 10_000, "jobs started");
    const before = await waitFor(
      async () => {
        const members = await terminalMembers(terminal.pid);
        return members.length >= 3 ? members : undefined;
      },
      5_000,
      "jobs visible in /proc",
    );
    await closeTerminal(socket, terminal.terminalId);
    await waitFor(
      () =>
        before.every(
          (pid) => !fs.existsSync(`/proc/${pid}`) || fs.readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z "),
        ),
      5_000,
      "all gone",
    );
    viewer.dispose();
  });

  it("leaves no processes or file descriptors behind after 100 open/close cycles", async () => {
    const socket = await bridge.socket();
    const fdsBefore = fs.readdirSync("/proc/self/fd").length;
    const pids: number[] = [];
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) {
      const terminal = await openTerminal(socket);
      pids.push(terminal.pid);
      ids.push(terminal.terminalId);
      // Some shells get a child too, so a tree (not only the shell) has to die.
      if (i % 5 === 0)
        await emitCommand(socket, "pty.input", { sessionId, terminalId: terminal.terminalId, data: "sleep 1000 &\r" });
      if (i % 10 === 0) {
        const viewer = new PtyViewer(socket, sessionId, terminal.terminalId, { xterm: false });
        await viewer.attach();
        viewer.dispose();
      }
      await closeTerminal(socket, terminal.terminalId);
    }
    const listed = await emitCommand<{ terminals: TerminalInfo[] }>(socket, "pty.list", { sessionId });
    expect(listed.terminals).toEqual([]);
    const leftovers = pids.filter((pid) => fs.existsSync(`/proc/${pid}`));
    expect(leftovers).toEqual([]);
    // Nothing started from those shells survives either: every process of a terminal carries its id in its environment.
    const survivors = fs
      .readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name))
      .filter((name) => {
        try {
          const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
          const environ = fs.readFileSync(`/proc/${name}/environ`, "latin1");
          return ids.some((id) => environ.includes(`WORLDLINE_TERMINAL_ID=${id}\0`)) && !stat.includes(") Z ");
        } catch {
          return false; // Exited while we looked.
        }
      });
    expect(survivors).toEqual([]);
    await waitFor(() => fs.readdirSync("/proc/self/fd").length <= fdsBefore + 5, 5_000, "fds released");
  }, 180_000);

  it("runs a line in the active terminal, opening one when there is none", async () => {
    const socket = await bridge.socket();
    const { terminals } = await emitCommand<{ terminals: TerminalInfo[] }>(socket, "pty.list", { sessionId });
    expect(terminals).toEqual([]);
    const updates: TerminalInfo[][] = [];
    socket.on("pty.terminals", (message: { terminals: TerminalInfo[] }) => updates.push(message.terminals));
    const { terminalId } = await emitCommand<{ terminalId: string }>(socket, "pty.run", {
      commandId: uniqueId(),
      sessionId,
      line: "echo ran-$((2+3)) > ran.txt",
    });
    await waitFor(() => fs.existsSync(path.join(bridge.workspace, "ran.txt")), 10_000, "the line ran");
    expect(fs.readFileSync(path.join(bridge.workspace, "ran.txt"), "utf8")).toBe("ran-5\n");
    await waitFor(() => updates.length > 0, 5_000, "terminal list broadcast");
    const again = await emitCommand<{ terminalId: string }>(socket, "pty.run", {
      commandId: uniqueId(),
      sessionId,
      line: "true",
    });
    expect(again.terminalId).toBe(terminalId);
    await closeTerminal(socket, terminalId);
  });

  it("rejects bad payloads and unknown terminals", async () => {
    const socket = await bridge.socket();
    const ack = await socket
      .timeout(5_000)
      .emitWithAck("pty.resize", { sessionId, terminalId: "nope", cols: 0, rows: 10 });
    expect(ack.ok).toBe(false);
    await expect(emitCommand(socket, "pty.input", { sessionId, terminalId: "nope", data: "x" })).rejects.toMatchObject({
      code: "pty:not_found",
    });
  });
});
