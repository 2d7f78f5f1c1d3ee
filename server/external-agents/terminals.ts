import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import type * as acp from "@agentclientprotocol/sdk";
import { forgetProcess, killProcesses, recordProcess } from "../processes";

/** Output kept per terminal when the agent gives no limit: enough for build logs, bounded memory. */
const DEFAULT_OUTPUT_LIMIT = 1_000_000;

interface RunningTerminal {
  child: ChildProcess;
  output: string;
  truncated: boolean;
  limit: number;
  exit: Promise<acp.TerminalExitStatus>;
  status?: acp.TerminalExitStatus;
}

/**
 * The terminal/* methods an external agent calls on Worldline: commands run in
 * the session's workspace as their own process group (so kill and release
 * end everything they started).
 */
export class ExternalTerminals {
  private readonly terminals = new Map<string, RunningTerminal>();

  constructor(
    private readonly workspace: string,
    /** The SDK's error type, from the connection's (lazily loaded) SDK. */
    private readonly errors: typeof acp.RequestError,
  ) {}

  create(params: acp.CreateTerminalRequest): acp.CreateTerminalResponse {
    const env = { ...process.env, ...Object.fromEntries((params.env ?? []).map((v) => [v.name, v.value])) };
    const args = params.args ?? [];
    // A bare command line (no args) is a shell line, as agents usually send it.
    const child =
      args.length > 0
        ? spawn(params.command, args, { cwd: params.cwd ?? this.workspace, env, detached: true })
        : spawn("bash", ["--norc", "--noprofile", "-c", params.command], {
            cwd: params.cwd ?? this.workspace,
            env,
            detached: true,
          });
    // Recorded like the bridge's own commands: a bridge killed with SIGKILL has it ended at the next start.
    if (child.pid !== undefined) recordProcess(child.pid, "group", "external agent terminal");
    const terminal: RunningTerminal = {
      child,
      output: "",
      truncated: false,
      limit: params.outputByteLimit ?? DEFAULT_OUTPUT_LIMIT,
      exit: new Promise((resolve) => {
        child.once("error", (error) => {
          terminal.output += `${error.message}\n`;
          resolve({ exitCode: 127, signal: null });
        });
        child.once("close", (code, signal) => {
          if (child.pid !== undefined) forgetProcess(child.pid);
          resolve({ exitCode: code, signal });
        });
      }),
    };
    const append = (chunk: Buffer) => {
      terminal.output += chunk.toString("utf8");
      if (Buffer.byteLength(terminal.output) > terminal.limit) {
        // Keep the end: the latest output is what an agent reads.
        terminal.output = terminal.output.slice(-terminal.limit);
        terminal.truncated = true;
      }
    };
    child.stdout?.on("data", append);
    child.stderr?.on("data", append);
    void terminal.exit.then((status) => (terminal.status = status));
    const terminalId = `term_${randomUUID()}`;
    this.terminals.set(terminalId, terminal);
    return { terminalId };
  }

  output(terminalId: string): acp.TerminalOutputResponse {
    const terminal = this.get(terminalId);
    return { output: terminal.output, truncated: terminal.truncated, exitStatus: terminal.status ?? null };
  }

  async waitForExit(terminalId: string): Promise<acp.WaitForTerminalExitResponse> {
    return this.get(terminalId).exit;
  }

  /** Ends the command's process group (SIGTERM, SIGKILL after the grace); resolves when it is gone. */
  kill(terminalId: string): Promise<void> {
    return killGroup(this.get(terminalId));
  }

  release(terminalId: string): Promise<void> {
    const terminal = this.terminals.get(terminalId);
    if (!terminal) return Promise.resolve();
    this.terminals.delete(terminalId);
    return killGroup(terminal);
  }

  async releaseAll(): Promise<void> {
    await Promise.all([...this.terminals.keys()].map((id) => this.release(id)));
  }

  private get(terminalId: string): RunningTerminal {
    const terminal = this.terminals.get(terminalId);
    if (!terminal) throw this.errors.resourceNotFound(terminalId);
    return terminal;
  }
}

/** The one kill path of server/processes: the command runs `detached`, so its pid is its group's id. */
async function killGroup(terminal: RunningTerminal): Promise<void> {
  const pid = terminal.child.pid;
  // `close` (status) comes once every holder of the command's output is gone; until then, even after the
  // leader exited, what it left running in its group is killed too.
  if (pid === undefined || terminal.status) return;
  await killProcesses({ kind: "group", pgid: pid }, { leaderExited: terminal.exit });
}
