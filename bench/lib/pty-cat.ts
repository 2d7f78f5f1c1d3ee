import path from "node:path";
import { performance } from "node:perf_hooks";
import type { Socket } from "socket.io-client";
import type { TerminalInfo } from "../../server/protocol";
import { markerScanner, PtyViewer } from "../../tests/integration/pty/pty-client";
import { command } from "./bridge-child.ts";
import { processCpuMs } from "./proc.ts";
import { sleep } from "./stats.ts";

/** The command a throughput run types: the file, then a marker line the run waits for. */
export const CAT_COMMAND = (file: string) => `cat ${path.basename(file)}; echo END-$((1+1))`;

export interface CatRun {
  rate: number;
  /** CPU of the process the output came through (the bridge, or the forwarder), per MB. */
  serverCpuMsPerMb: number;
  clientCpuMsPerMb: number;
}

/** Times `start()`'s `cat` of the file, ended by the line "END-2", until `viewer`'s xterm has parsed all of it. */
export async function timedCat(viewer: PtyViewer, serverPid: number, start: () => void): Promise<CatRun> {
  // Anywhere in a chunk: the prompt that follows the marker in the same chunk is longer than any fixed tail window.
  const sawEnd = markerScanner("END-2");
  const done = new Promise<void>((resolve) =>
    viewer.onData((chunk) => {
      if (sawEnd(chunk)) resolve();
    }),
  );
  const before = viewer.received;
  const serverCpuBefore = processCpuMs(serverPid);
  const clientCpuBefore = process.cpuUsage();
  const startedAt = performance.now();
  start();
  await done;
  await new Promise<void>((resolve) => viewer.term?.write("", resolve)); // Until the client has parsed it all.
  const seconds = (performance.now() - startedAt) / 1000;
  const megabytes = (viewer.received - before) / 1e6;
  const clientCpu = process.cpuUsage(clientCpuBefore);
  return {
    rate: megabytes / seconds,
    serverCpuMsPerMb: (processCpuMs(serverPid) - serverCpuBefore) / megabytes,
    clientCpuMsPerMb: (clientCpu.user + clientCpu.system) / 1000 / megabytes,
  };
}

/** Opens a terminal in the session and a viewer on it, and waits for the shell's first prompt. */
export async function openViewer(
  socket: Socket,
  sessionId: string,
  options: ConstructorParameters<typeof PtyViewer>[3],
): Promise<PtyViewer> {
  const { terminalId } = await command<TerminalInfo>(socket, "pty.create", { sessionId, cols: 120, rows: 30 });
  const viewer = new PtyViewer(socket, sessionId, terminalId, { cols: 120, rows: 30, ...options });
  await viewer.attach();
  const deadline = Date.now() + 10_000;
  while (viewer.received === 0 && Date.now() < deadline) await sleep(20);
  await sleep(200);
  return viewer;
}
