/**
 * The baselines bench/pty.ts pairs each bridge run with, measured in the bench's own process:
 * a raw node-pty read of the same `cat` (the most any bridge could forward) and a headless
 * xterm like the bench client's parsing the same text (the client's own ceiling).
 */
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import headlessPackage from "@xterm/headless";
import * as nodePty from "node-pty";

// CommonJS package: Node's ESM loader only offers its default export.
const { Terminal: HeadlessTerminal } = headlessPackage;

/** How much the client-alone parse keeps queued in its xterm (a multiple of its 128 KB writes). */
const CLIENT_QUEUE_BYTES = 8 * 1024 * 1024;

/** Writes a text file of 80-column numbered lines, `megabytes` MB of it; returns its size. */
export function writeTextFile(file: string, megabytes: number): number {
  const lines =
    Array.from({ length: 1000 }, (_, i) =>
      `${String(i).padStart(6, "0")} ${"lorem ipsum dolor sit amet consectetur adipiscing elit ".slice(i % 20)}`.padEnd(
        79,
        ".",
      ),
    ).join("\n") + "\n";
  const block = Buffer.from(lines.repeat(Math.ceil(1_000_000 / lines.length)));
  const fd = fs.openSync(file, "w");
  let written = 0;
  while (written < megabytes * 1_000_000) written += fs.writeSync(fd, block);
  fs.closeSync(fd);
  return written;
}

/** Reads `cat file` from a node-pty in this process: the ceiling any bridge could reach. */
export async function rawPtyRate(file: string): Promise<number> {
  const start = performance.now();
  const pty = nodePty.spawn("cat", [file], {
    name: "xterm-256color",
    cols: 120,
    rows: 30,
    cwd: path.dirname(file),
    env: process.env as Record<string, string>,
    encoding: null,
  });
  let bytes = 0;
  pty.onData((data) => (bytes += (data as unknown as Buffer).length));
  await new Promise((resolve) => pty.onExit(resolve));
  return bytes / 1e6 / ((performance.now() - start) / 1000);
}

/**
 * A headless xterm like the bench client's parsing the whole file in this process, with no bridge: the client's own
 * ceiling. The same bytes as a bridge run, not its first 30 MB: a parse of under a second swung far more with the
 * machine than the bridge runs it is paired with.
 */
export async function clientXtermRate(file: string): Promise<number> {
  const term = new HeadlessTerminal({ cols: 120, rows: 30, scrollback: 1000, allowProposedApi: true });
  const fd = fs.openSync(file, "r");
  const text = Buffer.alloc(fs.fstatSync(fd).size);
  fs.readSync(fd, text, 0, text.length, 0);
  fs.closeSync(fd);
  const bytes = Buffer.from(text.toString("latin1").replaceAll("\n", "\r\n"), "latin1"); // As the tty sends it (onlcr).
  const start = performance.now();
  // xterm throws away writes once 50 MB wait: keep 8-16 MB queued, so it never runs dry either.
  let parsedUpTo: Promise<void> = Promise.resolve();
  for (let at = 0; at < bytes.length; at += 128 * 1024) {
    if (at % CLIENT_QUEUE_BYTES === 0) {
      await parsedUpTo;
      parsedUpTo = new Promise<void>((resolve) => term.write(bytes.subarray(at, at + 128 * 1024), resolve));
    } else term.write(bytes.subarray(at, at + 128 * 1024));
  }
  await new Promise<void>((resolve) => term.write("", resolve));
  const rate = bytes.length / 1e6 / ((performance.now() - start) / 1000);
  term.dispose();
  return rate;
}
