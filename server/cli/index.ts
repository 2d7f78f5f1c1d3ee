import { errorMessage } from "../errors";

// stdout carries protocol only (the ready line, ACP messages, print-mode output):
// every log, including those of libraries such as Next.js, goes to stderr.
console.log = console.error;
console.info = console.error;
console.debug = console.error;

const USAGE = `Usage:
  worldline [serve]                     start the bridge and web UI
  worldline acp                         run as an ACP agent on stdio
  worldline run -p "<prompt>" [--cwd DIR] [--yolo] [--model M] [--output-format text|stream-json]
                  [--final-message-only]   print mode; exit 0 ok, 1 failure, 75 retryable (429/5xx/timeouts)
  worldline runner --hub URL --token TOKEN [--name NAME] [--root DIR]...
                                        serve this machine's folders to a hub
  worldline runners add NAME [--root DIR]... | list | revoke NAME
                                        enroll, list and revoke runners (on the hub)
`;

async function main(argv: string[]): Promise<number | undefined> {
  const [command = "serve"] = argv;
  switch (command) {
    case "serve":
      await (await import("./serve")).serve();
      return undefined;
    case "acp":
      return (await import("./acp")).acpCommand();
    case "run":
      return (await import("./run")).runCommand(argv.slice(1));
    case "runner":
      return (await import("./runner")).runnerCommand(argv.slice(1));
    case "runners":
      return (await import("./runners")).runnersCommand(argv.slice(1));
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(USAGE);
      return 0;
    default:
      process.stderr.write(`Unknown command "${command}".\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined) process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(`[worldline] ${errorMessage(error)}\n`);
    process.exit(1);
  },
);
