import { errorMessage, WorldlineError } from "../errors";
import type { StdioProcess, StdioSpec, ToolHost } from "../host";

/** Stdio programs a runner runs at once, all hubs' sessions together. */
const MAX_RUNNER_STDIO = 64;

/**
 * The hub's stdio programs on this machine (MCP servers, external ACP agents of sessions on
 * this runner): started by this runner's LocalHost in a folder under its roots, their stdout
 * and stderr sent as `runner.output`, their end as `runner.exit`. They keep running while the
 * hub is away; `stdio.stop` and the runner's shutdown end them through the one kill path.
 */
/** How a program's output and end go back to the hub; `route` is the asking bridge's (server/protocol/runner.ts). */
export interface StdioReplies {
  /** `stream`: "stderr" for a stdio program's stderr. */
  output(processId: string, chunk: string, route: string | undefined, stream?: "stderr"): void;
  exit(
    processId: string,
    info: { code: number | null; signal: string | null; leftoversStopped: boolean },
    route: string | undefined,
  ): void;
  log(line: string): void;
}

export class RunnerStdio {
  private readonly running = new Map<string, StdioProcess>();

  constructor(
    private readonly host: ToolHost,
    private readonly send: StdioReplies,
  ) {}

  /** `route`: the hub bridge that asked (server/protocol/runner.ts), put on the program's output and exit. */
  async open(
    spec: Pick<StdioSpec, "command" | "args" | "cwd" | "env" | "inherit" | "bundled"> & { processId: string },
    route: string | undefined,
  ) {
    const { processId } = spec;
    if (this.running.has(processId))
      throw new WorldlineError("runner:bad_request", `Program ${processId} already runs.`);
    if (this.running.size >= MAX_RUNNER_STDIO)
      throw new WorldlineError("runner:busy", `This runner already runs ${MAX_RUNNER_STDIO} stdio programs.`);
    const started = await this.host.spawnStdio({
      command: spec.command,
      args: spec.args,
      cwd: spec.cwd,
      env: spec.env,
      inherit: spec.inherit,
      ...(spec.bundled ? { bundled: spec.bundled } : {}),
      onStdout: (chunk) => this.send.output(processId, chunk, route),
      onStderr: (chunk) => this.send.output(processId, chunk, route, "stderr"),
      onExit: ({ code, signal }) => {
        this.running.delete(processId);
        this.send.exit(processId, { code, signal, leftoversStopped: false }, route);
      },
    });
    this.running.set(processId, started);
    return { pid: started.pid };
  }

  write(processId: string, data: string): void {
    const running = this.running.get(processId);
    if (!running) throw new WorldlineError("runner:bad_request", `No program ${processId} runs on this runner.`);
    running.write(data);
  }

  async stop(processId: string): Promise<void> {
    await this.running.get(processId)?.stop();
  }

  async stopAll(): Promise<void> {
    await Promise.all(
      [...this.running.entries()].map(([id, running]) =>
        running.stop().catch((error: unknown) => this.send.log(`program ${id} not stopped: ${errorMessage(error)}`)),
      ),
    );
  }
}
