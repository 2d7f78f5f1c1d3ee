import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { forgetProcess, killProcesses, recordProcess } from "../processes";
import { scrubEnvironment } from "../secrets";
import type { ExitInfo, StdioProcess, StdioSpec } from "./types";
import { bundledCommand } from "./bundled";

/** What a stdio program started with `inherit: "basic"` gets of the host's environment (the MCP SDK's list). */
const BASIC_ENVIRONMENT = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"] as const;

function baseEnvironment(inherit: StdioSpec["inherit"]): NodeJS.ProcessEnv {
  // Whatever the program's configuration asks for, the bridge's own secrets stay behind (server/secrets).
  if (inherit === "all") return scrubEnvironment(process.env) as NodeJS.ProcessEnv;
  // Next.js's types make NODE_ENV required; a basic environment has none, as the MCP SDK's has none.
  // A value starting with "()" is a shell function body; the MCP SDK leaves those out too.
  return Object.fromEntries(
    BASIC_ENVIRONMENT.flatMap((name) => {
      const value = process.env[name];
      return value === undefined || value.startsWith("()") ? [] : [[name, value]];
    }),
  ) as NodeJS.ProcessEnv;
}

/**
 * A program talking over its stdin and stdout (an MCP server, an external ACP agent), started
 * `detached` and recorded, so it and whatever it starts end together through the one kill path
 * (`tree`) and a bridge or runner killed with SIGKILL has them ended at its next start.
 */
export async function startStdioProcess(spec: StdioSpec, label: string): Promise<StdioProcess> {
  const { command, args } = spec.bundled ? bundledCommand(spec.bundled, spec.args) : spec;
  const child: ChildProcessWithoutNullStreams = spawn(command, args, {
    cwd: spec.cwd,
    env: { ...baseEnvironment(spec.inherit), ...spec.env },
    detached: true,
    stdio: "pipe",
  });
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", reject);
  });
  const pid = child.pid!;
  recordProcess(pid, "group", label);
  child.stdout.setEncoding("utf8").on("data", spec.onStdout);
  child.stderr.setEncoding("utf8").on("data", spec.onStderr);
  // A program that exits before reading what it was sent makes the write fail with EPIPE; its exit tells.
  child.stdin.on("error", () => undefined);
  const exited = new Promise<ExitInfo>((resolve) =>
    child.once("close", (code, signal) => {
      forgetProcess(pid);
      resolve({ code, signal });
    }),
  );
  void exited.then(spec.onExit);
  let stopping: Promise<void> | undefined;
  return {
    pid,
    write: (data) => void child.stdin.write(data),
    stop: () => (stopping ??= killProcesses({ kind: "tree", rootPid: pid }, { leaderExited: exited })),
  };
}
