import tty from "node:tty";
import * as nodePty from "node-pty";

/** Where each read of the pty lands, and what is told of it: net.Socket's `onread` option. */
export interface PtyReads {
  /** Called when reading starts and after every callback: the buffer the next read fills (never empty). */
  buffer: () => Buffer;
  /** `length` bytes were read into the start of `buffer`, the one `buffer()` last returned. */
  callback: (length: number, buffer: Buffer) => void;
}

/**
 * Spawns a shell on a pty whose output is read into buffers of the caller's choosing
 * (net.Socket's `onread`), so a read can land straight where the caller gathers output.
 *
 * node-pty reads through a `tty.ReadStream` on the master fd. By default each read
 * allocates its own buffer and passes through the stream machinery: on Linux a read is at
 * most 4 KB, so a flood costs ~250 allocations per MB, with the garbage collection they
 * bring, before a byte reaches a viewer. node-pty builds that stream synchronously in its
 * constructor, so for that one call `tty.ReadStream` is swapped for one that passes the
 * `onread` option; node-pty's pause, resume, error and close handling work as before
 * (Node supports pausing such a socket), only its `data` events stop: the callback replaces them.
 * node-pty has no supported way to pass `onread`; kept for its figure (bench/README.md, "The read
 * stream swapped"): `bridge_cpu_ms_per_mb` 11.1–12.5 with it against 14.6 without, 15–25 % of it.
 */
export function spawnPty(
  file: string,
  args: string[],
  options: nodePty.IPtyForkOptions,
  onread: PtyReads,
): nodePty.IPty {
  const ReadStream = tty.ReadStream;
  tty.ReadStream = function (fd: number) {
    return new ReadStream(fd, { onread } as ConstructorParameters<typeof ReadStream>[1]);
  } as unknown as typeof tty.ReadStream;
  try {
    return nodePty.spawn(file, args, options);
  } finally {
    tty.ReadStream = ReadStream;
  }
}
