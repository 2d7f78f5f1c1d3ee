/**
 * The least a bridge can do, for bench/pty.ts to compare the real one with: a socket.io server that runs one command
 * on a node-pty and forwards its output as `pty.data` frames, batched like the bridge (OUTPUT_BATCH_MS, and
 * FLOOD_BATCH_MS while output streams, up to MAX_BATCH_BYTES) and paused by the viewer's acks at the bridge's
 * watermarks. No screen mirror, sessions, auth, validation or ring: what is left of a bridge's cost is reading the pty
 * and writing the socket, so the client ratio it reaches is what the bridge's own work (its screen mirror first) is
 * measured against. Not a ceiling: its reads allocate, its batches are concatenated, and the bridge's are not.
 *
 * Run as a child (`node --import tsx bench/pty-forwarder.ts`); it prints `{"url"}` as JSON.
 * Socket events: `forward {terminalId, command, cwd}` starts the command (one at a time), its output comes as
 * `pty.data (terminalId, bytes)`, and `pty.ack {bytes}` acknowledges it.
 */
import http from "node:http";
import * as nodePty from "node-pty";
import { Server } from "socket.io";
import {
  FLOOD_BATCH_BYTES,
  FLOOD_BATCH_MS,
  HIGH_WATERMARK_BYTES,
  LOW_WATERMARK_BYTES,
  MAX_BATCH_BYTES,
  OUTPUT_BATCH_MS,
} from "../server/pty/limits";

interface Forwarding {
  pty: nodePty.IPty;
  acked(bytes: number): void;
}

interface Request {
  terminalId: string;
  command: string;
  cwd: string;
}

function forward(socket: import("socket.io").Socket, { terminalId, command, cwd }: Request): Forwarding {
  // The command's last line keeps the pty open until it is killed: output read after a pty's exit can be lost.
  const pty = nodePty.spawn("bash", ["--norc", "-c", `${command}; exec sleep 600`], {
    name: "xterm-256color",
    cols: 120,
    rows: 30,
    cwd,
    env: process.env as Record<string, string>,
    encoding: null,
  });
  let parts: Buffer[] = [];
  let size = 0;
  let timer: NodeJS.Timeout | null = null;
  /** When the last batch was sent, if it was a large one: the next gathers for FLOOD_BATCH_MS (as in the bridge). */
  let floodFlushAt = 0;
  let unacked = 0;
  let paused = false;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (size === 0) return;
    const chunk = parts.length === 1 ? parts[0] : Buffer.concat(parts, size);
    parts = [];
    size = 0;
    floodFlushAt = chunk.length >= FLOOD_BATCH_BYTES ? performance.now() : 0;
    unacked += chunk.length;
    socket.emit("pty.data", terminalId, chunk);
    if (!paused && unacked > HIGH_WATERMARK_BYTES) {
      paused = true;
      pty.pause();
    }
  };
  pty.onData((data) => {
    const bytes = data as unknown as Buffer;
    parts.push(bytes);
    size += bytes.length;
    if (size >= MAX_BATCH_BYTES) flush();
    else {
      const streaming = floodFlushAt > 0 && performance.now() - floodFlushAt < OUTPUT_BATCH_MS;
      timer ??= setTimeout(flush, streaming ? FLOOD_BATCH_MS : OUTPUT_BATCH_MS);
    }
  });
  const acked = (bytes: number) => {
    unacked = Math.max(0, unacked - bytes);
    if (paused && unacked < LOW_WATERMARK_BYTES) {
      paused = false;
      pty.resume();
    }
  };
  return { pty, acked };
}

const server = http.createServer();
const io = new Server(server, { perMessageDeflate: false });
io.on("connection", (socket) => {
  let current: Forwarding | null = null;
  socket.on("forward", (request: Request) => {
    current?.pty.kill();
    current = forward(socket, request);
  });
  socket.on("pty.ack", (ack: { bytes?: unknown }) => {
    if (typeof ack?.bytes === "number") current?.acked(ack.bytes);
  });
  socket.on("disconnect", () => current?.pty.kill());
});
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
});
process.on("SIGTERM", () => process.exit(0));
