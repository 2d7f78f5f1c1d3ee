import { WorldlineError } from "../errors.ts";
import { spawnGit, type GitTarget } from "./git.ts";

/**
 * Streams blob contents out of one `git cat-file --batch` process, in request order.
 * One process for a whole restore instead of one per file: 100 spawns alone would cost
 * more than the 1 s budget for rewinding 100 files.
 */
export async function* readBlobs(target: GitTarget, blobs: readonly string[]): AsyncGenerator<Buffer> {
  if (blobs.length === 0) return;
  const child = spawnGit(target, ["cat-file", "--batch"]);
  const stderr: Buffer[] = [];
  child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
  const exited = new Promise<number>((resolve) => child.on("close", (code) => resolve(code ?? -1)));
  // cat-file answers as it reads; if it dies early the write fails and the missing output reports it.
  child.stdin.on("error", () => {});
  child.stdin.end(blobs.map((blob) => `${blob}\n`).join(""));

  let pending: Buffer = Buffer.alloc(0);
  let body: Buffer[] = [];
  let bodyLength = 0;
  let expected = -1; // content bytes still to come for the current blob, -1 while reading a header
  let delivered = 0;
  try {
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      while (pending.length > 0) {
        if (expected < 0) {
          const newline = pending.indexOf(0x0a);
          if (newline < 0) break;
          const header = pending.subarray(0, newline).toString("utf8");
          pending = pending.subarray(newline + 1);
          const [name, type, size] = header.split(" ");
          if (type !== "blob") {
            throw new WorldlineError(
              "checkpoint:corrupt",
              `snapshot object ${name} is ${type ?? "unreadable"}, expected a blob`,
            );
          }
          expected = Number(size);
          body = [];
          bodyLength = 0;
        }
        // Content is followed by one newline; collect chunks and join once, so big files are not copied per chunk.
        const take = Math.min(expected + 1 - bodyLength, pending.length);
        body.push(pending.subarray(0, take));
        bodyLength += take;
        pending = pending.subarray(take);
        if (bodyLength < expected + 1) break;
        const content = Buffer.concat(body, bodyLength).subarray(0, expected);
        expected = -1;
        delivered++;
        yield content;
      }
    }
  } finally {
    if (child.exitCode === null) child.kill();
  }
  const code = await exited;
  if (delivered < blobs.length) {
    throw new WorldlineError(
      "checkpoint:git_failed",
      `git cat-file stopped early (exit ${code}): ${Buffer.concat(stderr).toString("utf8").trim()}`,
    );
  }
}
