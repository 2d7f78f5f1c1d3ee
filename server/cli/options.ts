import { parseArgs } from "node:util";

/** Exit codes of the command (README, "Command line"): 2 is a command line that is wrong, 1 a run that failed. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** An error the command reports as one line (never a stack trace) and exits with. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILURE,
  ) {
    super(message);
    this.name = "CliError";
  }
}

export interface StartOptions {
  open: boolean;
  /** Given on the command line (they win over PORT and HOST); undefined when not. */
  port?: string;
  host?: string;
  /** The folder argument of `worldline [folder]`, as typed. */
  folder?: string;
  help: boolean;
  version: boolean;
}

const SEE_HELP = "Run `worldline --help` for usage.";
const MAX_PORT = 65535;

/** Flags of `worldline [folder]` and `worldline serve`; `serve` takes no folder. */
export function parseStartArgs(argv: string[], { folder }: { folder: boolean }): StartOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        open: { type: "boolean", default: false },
        port: { type: "string", short: "p" },
        host: { type: "string" },
        help: { type: "boolean", short: "h", default: false },
        version: { type: "boolean", short: "v", default: false },
      },
    });
  } catch (error) {
    throw usageError(error);
  }
  const { values, positionals } = parsed;
  if (positionals.length > (folder ? 1 : 0)) {
    const extra = positionals.slice(folder ? 1 : 0).join(" ");
    throw new CliError(`Unexpected argument "${extra}". ${SEE_HELP}`, EXIT_USAGE);
  }
  if (values.port !== undefined && !(/^\d{1,5}$/.test(values.port) && Number(values.port) <= MAX_PORT)) {
    throw new CliError(
      `--port must be a number from 0 to 65535 (0 picks a free port), got "${values.port}".`,
      EXIT_USAGE,
    );
  }
  if (values.host !== undefined && values.host.trim() === "")
    throw new CliError("--host needs an address.", EXIT_USAGE);
  return {
    open: values.open,
    port: values.port,
    host: values.host,
    folder: positionals[0],
    help: values.help,
    version: values.version,
  };
}

/** A parse error of node:util's parseArgs as one line and exit code 2, with where to read the usage. */
export function usageError(error: unknown, seeHelp = SEE_HELP): CliError {
  return new CliError(`${usageProblem(error)} ${seeHelp}`, EXIT_USAGE);
}

/** node:util's parse errors, shortened to what a person typed wrong. */
function usageProblem(error: unknown): string {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  const option = /'(-[^']*)'/.exec(message)?.[1];
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && option) return `Unknown option "${option}".`;
  const long = /--[\w-]+/.exec(message)?.[0];
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && long) {
    return message.includes("argument missing")
      ? `Option "${long}" needs a value.`
      : `Option "${long}" takes no value.`;
  }
  return message.split("\n")[0];
}
