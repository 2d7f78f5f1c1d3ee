import { randomUUID } from "node:crypto";
import type * as acp from "@agentclientprotocol/sdk";
import { errorMessage } from "../errors";
import type { HostProcess, WorkspaceHost } from "../host";
import { quoteForShell } from "../tools";

/** Output kept per terminal when the agent gives no limit: enough for build logs, bounded memory. */
const DEFAULT_OUTPUT_LIMIT = 1_000_000;

interface RunningTerminal {
  process: HostProcess;
  output: string;
  truncated: boolean;
  limit: number;
  exit: Promise<acp.TerminalExitStatus>;
  status?: acp.TerminalExitStatus;
}

/**
 * The terminal/* methods an external agent calls on Worldline: commands run through the
 * session's host (this machine, or its runner) in the workspace as their own process group,
 * so kill and release end everything they started through that machine's kill path.
 */
export class ExternalTerminals {
  private readonly terminals = new Map<string, RunningTerminal>();

  constructor(
    private readonly host: Pick<WorkspaceHost, "exec">,
    private readonly workspace: string,
    /** The SDK's error type, from the connection's (lazily loaded) SDK. */
    private readonly errors: typeof acp.RequestError,
  ) {}

  async create(params: acp.CreateTerminalRequest): Promise<acp.CreateTerminalResponse> {
    const args = params.args ?? [];
    const terminal = {
      output: "",
      truncated: false,
      limit: params.outputByteLimit ?? DEFAULT_OUTPUT_LIMIT,
    } as RunningTerminal;
    const append = (chunk: string) => {
      terminal.output += chunk;
      if (Buffer.byteLength(terminal.output) > terminal.limit) {
        // Keep the end: the latest output is what an agent reads.
        terminal.output = terminal.output.slice(-terminal.limit);
        terminal.truncated = true;
      }
    };
    terminal.process = await this.host.exec({
      // A bare command line (no args) is a shell line, as agents usually send it.
      command: args.length > 0 ? [params.command, ...args].map(quoteForShell).join(" ") : params.command,
      cwd: params.cwd ?? this.workspace,
      env: Object.fromEntries((params.env ?? []).map((variable) => [variable.name, variable.value])),
      onOutput: append,
    });
    // Once the shell exits and its output drained, what it left holding the output is stopped (the host's rule).
    terminal.exit = terminal.process.finish().then(
      ({ exit }) => ({ exitCode: exit.code, signal: exit.signal }),
      (error: unknown) => {
        // Its runner is gone: the agent reads why, with no exit code.
        append(`\n${errorMessage(error)}\n`);
        return { exitCode: null, signal: null };
      },
    );
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
    return stopTerminal(this.get(terminalId));
  }

  release(terminalId: string): Promise<void> {
    const terminal = this.terminals.get(terminalId);
    if (!terminal) return Promise.resolve();
    this.terminals.delete(terminalId);
    return stopTerminal(terminal);
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

/** A finished command has nothing left to end; a running one is stopped with its group. */
async function stopTerminal(terminal: RunningTerminal): Promise<void> {
  if (!terminal.status) await terminal.process.stop();
}
