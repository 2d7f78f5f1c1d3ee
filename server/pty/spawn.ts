import tty from "node:tty";
import * as nodePty from "node-pty";

/**
 * One buffer every terminal's reads land in: each read is copied out at once (see
 * `spawnPty`), and a pty read never returns more than the kernel's 4 KB line-discipline
 * buffer, so 64 KB is ample.
 */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

/**
 * Spawns a shell on a pty whose output is read into one reused buffer (net.Socket's
 * `onread`), handing `onRead` each read's bytes to copy before it returns.
 *
 * node-pty reads through a `tty.ReadStream` on the master fd. By default each read
 * allocates its own buffer and passes through the stream machinery: on Linux a read is at
 * most 4 KB, so a flood costs ~250 allocations per MB, with the garbage collection they
 * bring, before a byte reaches a viewer. node-pty builds that stream synchronously in its
 * constructor, so for that one call `tty.ReadStream` is swapped for one that passes the
 * `onread` option; node-pty's pause, resume, error and close handling work as before
 * (Node supports pausing such a socket), only its `data` events stop: `onRead` replaces them.
 */
export function spawnPty(
  file: string,
  args: string[],
  options: nodePty.IPtyForkOptions,
  onRead: (bytes: Buffer) => void,
): nodePty.IPty {
  const ReadStream = tty.ReadStream;
  const callback = (length: number, buffer: Buffer) => onRead(buffer.subarray(0, length));
  tty.ReadStream = function (fd: number) {
    return new ReadStream(fd, { onread: { buffer: READ_BUFFER, callback } } as ConstructorParameters<
      typeof ReadStream
    >[1]);
  } as unknown as typeof tty.ReadStream;
  try {
    return nodePty.spawn(file, args, options);
  } finally {
    tty.ReadStream = ReadStream;
  }
}
