import { parseArgs } from "node:util";
import { loadConfig } from "../config";
import { RunnerHub } from "../runners";
import * as store from "../store";

const USAGE = `Usage:
  worldline runners add NAME [--root DIR]...   enroll a runner; prints its one-time token last
  worldline runners list                       name, connected, roots, last seen
  worldline runners rename OLD NEW             rename it; its sessions follow, a connected runner reconnects
  worldline runners revoke NAME                revoke its credential; a connected runner is dropped at once
`;

/** `worldline runners add|list|rename|revoke`: on the hub's machine, with the hub's environment (its database). */
export async function runnersCommand(argv: string[]): Promise<number> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    options: { root: { type: "string", multiple: true } },
    allowPositionals: true,
    strict: true,
  });
  const config = loadConfig();
  const { db } = await store.openDb(config.home, config.databaseUrl);
  const hub = new RunnerHub({ db });
  try {
    switch (action) {
      case "add": {
        const [name] = positionals;
        if (!name) break;
        const token = await hub.add(name, values.root ?? []);
        process.stderr.write(
          `Runner "${name}" added. On its machine run:\n  worldline runner --hub <this hub's URL> --token <the token below> --root <folder>\n` +
            "The token works once, within 24 hours.\n",
        );
        process.stdout.write(`${token}\n`);
        return 0;
      }
      case "list": {
        const runners = await hub.list();
        // The bridge holding a runner's connection knows it is connected; this process reports last_seen.
        for (const runner of runners)
          process.stdout.write(`${runner.name}\t${runner.last_seen ?? "never seen"}\t${runner.roots.join(",")}\n`);
        return 0;
      }
      case "rename": {
        const [from, to] = positionals;
        if (!from || !to) break;
        if (!(await hub.rename(from, to))) {
          process.stderr.write(`No runner named "${from}".\n`);
          return 1;
        }
        process.stdout.write(`Runner "${from}" renamed to "${to}".\n`);
        return 0;
      }
      case "revoke": {
        const [name] = positionals;
        if (!name) break;
        if (!(await hub.revoke(name))) {
          process.stderr.write(`No runner named "${name}".\n`);
          return 1;
        }
        process.stdout.write(`Runner "${name}" revoked.\n`);
        return 0;
      }
    }
    process.stderr.write(USAGE);
    return 2;
  } finally {
    await hub.close();
    await db.$disconnect();
  }
}
