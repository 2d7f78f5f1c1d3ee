import { errorMessage, isWorldlineError } from "../errors";
import { CliError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, parseStartArgs } from "./options";

// stdout carries protocol only (the ready line, ACP messages, print-mode output):
// every log, including those of libraries such as Next.js, goes to stderr.
console.log = console.error;
console.info = console.error;
console.debug = console.error;

const USAGE = `Usage: worldline [folder] [options]

Opens the folder (default: the current one) in Worldline, a browser IDE with a coding agent:
starts the bridge, or uses the one already running for you, and prints the URL of the
folder's session. Data lives in WORLDLINE_HOME (default ~/.worldline), not in the folder.

Options:
  --open             open the URL in a browser ($BROWSER, else the system's)
  -p, --port <n>     port to listen on (default 4477, env PORT; 0 picks a free one)
  --host <address>   address to listen on (default 127.0.0.1, env HOST)
  -v, --version      print the version
  -h, --help         print this help

Commands:
  worldline serve [--port n] [--host a] [--open]
                     start the bridge and web UI on its home page (what \`npm start\` runs)
  worldline acp      run as an ACP agent on stdio (for editors such as Zed)
  worldline acp --hub <url>
                     the same, with sessions on a hub (WORLDLINE_API_TOKEN=<personal token>)
  worldline run -p "<prompt>" [--cwd DIR] [--yolo] [--model M] [--output-format text|stream-json]
                [--final-message-only]
                     print mode; exit 0 ok, 1 failure, 75 retryable (429/5xx/timeouts)
  worldline users add|list|role|password|disable|enable|token …
                     named people on a hub (worldline users --help)
  worldline runner --hub URL --token TOKEN [--name NAME] [--root DIR]...
                     serve this machine's folders to a hub
  worldline runners add NAME [--root DIR]... | list | rename OLD NEW | revoke NAME
                     enroll, list, rename and revoke runners (on the hub)
  worldline doctor   check the stored sessions, repair what is safe, list the rest

Model: WORLDLINE_MODEL, OPENAI_BASE_URL and OPENAI_API_KEY, or the settings page.
`;

async function main(argv: string[]): Promise<number | undefined> {
  const [command] = argv;
  switch (command) {
    case "acp":
      // No native check first: `initialize` must answer at once; a bridge that cannot load them says so on stderr.
      return (await import("./acp")).acpCommand(argv.slice(1));
    case "run":
      (await import("./native")).checkNativeModules();
      return (await import("./run")).runCommand(argv.slice(1));
    case "users":
      return (await import("./users")).usersCommand(argv.slice(1));
    case "doctor":
      return (await import("./doctor")).doctorCommand();
    case "runner": {
      // Before its terminals need node-pty: a skipped build gets its one message, not a failed terminal later.
      const native = await import("./native");
      native.checkNativeModules(native.RUNNER_NATIVE_MODULES);
      return (await import("./runner")).runnerCommand(argv.slice(1));
    }
    case "runners":
      return (await import("./runners")).runnersCommand(argv.slice(1));
    case "help":
      process.stdout.write(USAGE);
      return EXIT_OK;
    case "serve":
      return startCommand(argv.slice(1), false);
    default:
      return startCommand(argv, true);
  }
}

async function startCommand(argv: string[], folderMode: boolean): Promise<number | undefined> {
  const options = parseStartArgs(argv, { folder: folderMode });
  if (options.help) {
    process.stdout.write(USAGE);
    return EXIT_OK;
  }
  if (options.version) {
    process.stdout.write(`${(await import("./version")).packageVersion()}\n`);
    return EXIT_OK;
  }
  const folder = folderMode ? (await import("./folder")).resolveFolder(options.folder) : null;
  // Before loading the bridge, whose modules load them: a skipped build gets its one message, not a stack.
  (await import("./native")).checkNativeModules();
  return (await import("./serve")).start(options, folder);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined) process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(`worldline: ${errorMessage(error)}\n`);
    process.exit(exitCodeOf(error));
  },
);

function exitCodeOf(error: unknown): number {
  if (error instanceof CliError) return error.exitCode;
  if (isWorldlineError(error) && error.code === "config:invalid_env") return EXIT_USAGE;
  return EXIT_FAILURE;
}
