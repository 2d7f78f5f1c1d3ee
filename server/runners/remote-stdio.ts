import { randomUUID } from "node:crypto";
import { errorMessage } from "../errors";
import type { StdioProcess, StdioSpec } from "../host";
import type { CallOptions, RunnerLink } from "./link";

/**
 * A stdio program on a runner's machine: started with `stdio.open`, fed with `stdio.write`
 * (in order, over the one connection), its stdout and stderr arriving as `runner.output`, its
 * end as `runner.exit`, or as an unknown end when the runner is gone for good.
 */
export async function startRemoteStdio(link: RunnerLink, spec: StdioSpec, options: CallOptions): Promise<StdioProcess> {
  const processId = randomUUID();
  let exited = false;
  let markExited!: () => void;
  const gone = new Promise<void>((resolve) => (markExited = resolve));
  const exit = (info: { code: number | null; signal: NodeJS.Signals | null }, lost?: Error) => {
    if (exited) return;
    exited = true;
    markExited();
    spec.onExit(info, lost);
  };
  link.trackProcess(processId, {
    output: (chunk, stream) => (stream === "stderr" ? spec.onStderr(chunk) : spec.onStdout(chunk)),
    exit: ({ code, signal }) => exit({ code, signal }),
    lost: (error) => {
      spec.onStderr(`${error.message}\n`);
      exit({ code: null, signal: null }, error);
    },
  });
  const { command, args, cwd, env, inherit, bundled } = spec;
  let pid: number;
  try {
    ({ pid } = await link.call(
      { op: "stdio.open", processId, command, args, cwd, env, inherit, ...(bundled ? { bundled } : {}) },
      options,
    ));
  } catch (error) {
    link.forgetProcess(processId);
    throw error;
  }
  return {
    pid,
    write(data) {
      if (exited) return;
      link.call({ op: "stdio.write", processId, data }, options).catch((error: unknown) => {
        // The program or its runner is gone: its exit (or the runner's loss) reports that.
        spec.onStderr(`not sent to the program: ${errorMessage(error)}\n`);
      });
    },
    async stop() {
      if (exited) return;
      // A stop that cannot reach the runner has nothing more to do: the runner's loss ends the wait.
      await link.call({ op: "stdio.stop", processId }, options).catch(() => undefined);
      await gone;
    },
  };
}
