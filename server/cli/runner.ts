import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { loadConfig, ROOT_DIR } from "../config";
import { errorMessage } from "../errors";
import { runRunner } from "../runner";

const USAGE = "Usage: worldline runner --hub <url> --token <enrollment token> [--name NAME] [--root DIR]...\n";

/**
 * `worldline runner`: serves this machine's folders (--root, default the current folder) to a hub
 * it dials. It holds no database, Redis or model credentials: only its own, in WORLDLINE_HOME.
 */
export async function runnerCommand(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        hub: { type: "string" },
        token: { type: "string" },
        name: { type: "string" },
        root: { type: "string", multiple: true },
      },
      strict: true,
    }));
  } catch (error) {
    process.stderr.write(`${errorMessage(error)}\n${USAGE}`);
    return 2;
  }
  if (!values.hub) {
    process.stderr.write(USAGE);
    return 2;
  }
  const log = (line: string) => process.stderr.write(`[worldline runner] ${line}\n`);
  const runner = await runRunner({
    hub: values.hub,
    token: values.token,
    name: values.name,
    roots: values.root?.length ? values.root : [process.cwd()],
    home: loadConfig().home,
    version: JSON.parse(fs.readFileSync(path.join(ROOT_DIR, "package.json"), "utf8")).version,
    out: (line) => process.stdout.write(`${line}\n`),
    log,
  });
  const stop = () => void runner.stop();
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  try {
    await runner.done;
    return 0;
  } catch (error) {
    log(errorMessage(error));
    return 1;
  }
}
