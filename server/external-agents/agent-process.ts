import type { ExitInfo, StdioProcess, WorkspaceHost } from "../host";

/** An external agent's program, started where its session's workspace is, with its stdio as ACP's byte streams. */
export interface AgentProgram {
  process: StdioProcess;
  /** Resolves when it has exited (code and signal null: its runner is gone). */
  exited: Promise<ExitInfo>;
  /** Its stdout, for `ndJsonStream`'s input. */
  stdout: ReadableStream<Uint8Array>;
  /** Its stdin, for `ndJsonStream`'s output. */
  stdin: WritableStream<Uint8Array>;
  /** Set, before its stdout ends, when its runner is gone: why its connection closed. */
  lost?: Error;
}

/**
 * Starts `command` through the host's stdio channel (this machine's, or a runner's): `bash -c` in
 * the workspace with the host's own environment, not a login shell and no rc files (profile scripts
 * can block, pyenv's rehash lock for 60 s; bash runs ~/.bashrc even for `-c` when its stdin is a
 * socket, as Node's pipes are). The host starts it `detached` and ends it with everything it
 * started through its machine's kill path (`tree`).
 */
export async function startAgentProgram(
  host: Pick<WorkspaceHost, "spawnStdio">,
  spec: { command: string; cwd: string; onStderr: (chunk: string) => void },
): Promise<AgentProgram> {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  let reading = true;
  let output!: ReadableStreamDefaultController<Uint8Array>;
  const stdout = new ReadableStream<Uint8Array>({
    start: (controller) => void (output = controller),
    // The connection was closed: later output has nobody to go to.
    cancel: () => void (reading = false),
  });
  let markExited!: (exit: ExitInfo) => void;
  const exited = new Promise<ExitInfo>((resolve) => (markExited = resolve));
  const program = { exited, stdout } as AgentProgram;
  program.process = await host.spawnStdio({
    command: "bash",
    args: ["--norc", "--noprofile", "-c", spec.command],
    cwd: spec.cwd,
    env: {},
    inherit: "all",
    onStdout: (chunk) => reading && output.enqueue(encoder.encode(chunk)),
    onStderr: spec.onStderr,
    onExit: (exit, lost) => {
      program.lost = lost;
      if (reading) output.close();
      reading = false;
      markExited(exit);
    },
  });
  // ndJsonStream writes whole lines; `stream: true` keeps a character split across chunks whole anyway.
  program.stdin = new WritableStream<Uint8Array>({
    write: (chunk) => program.process.write(decoder.decode(chunk, { stream: true })),
  });
  return program;
}
