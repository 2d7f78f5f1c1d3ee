import { loadConfig } from "../config";
import { People } from "../people";
import { Password, Role, UserName } from "../protocol";
import * as store from "../store";
import { checkDatabaseModules } from "./native";

const USAGE = `Usage (on a hub, with the hub's environment: WORLDLINE_HOME or DATABASE_URL):
  worldline users add <name> --role admin|member|viewer [--password-stdin]
                                  prints a new password (or reads one line from stdin)
  worldline users list
  worldline users role <name> admin|member|viewer
  worldline users password <name> [--password-stdin]
  worldline users disable|enable <name>
  worldline users token <name> [--label <label>]
                                  prints a personal API token (Authorization: Bearer) as its last line
`;

/**
 * `worldline users …`: people on a hub, from the shell. The first admin is made this way (the
 * web UI has no "first visitor becomes admin" step, which anyone who reached the port first could
 * take); every later change can also be made by an admin over /api/v1/users.
 */
export async function usersCommand(argv: string[]): Promise<number> {
  const [action, name, ...rest] = argv;
  if (!action || action === "--help" || action === "-h") {
    process.stdout.write(USAGE);
    return action ? 0 : 2;
  }
  const config = loadConfig();
  checkDatabaseModules(config.databaseUrl);
  const { db } = await store.openDb(config.home, config.databaseUrl);
  const people = new People(db, { oidc: config.oidc !== null, oidcDefaultRole: config.oidcDefaultRole });
  try {
    switch (action) {
      case "add": {
        const role = Role.parse(option(rest, "--role"));
        const given = rest.includes("--password-stdin") ? Password.parse(await readLine()) : undefined;
        const { user, password } = await people.addUser({ name: UserName.parse(name), role, password: given });
        process.stdout.write(`Added ${user.name} (${user.role}).\n`);
        if (!given) process.stdout.write(`Password (shown once): ${password}\n`);
        return 0;
      }
      case "list":
        for (const user of await people.listUsers())
          process.stdout.write(`${user.name}\t${user.role}${user.disabled ? "\tdisabled" : ""}\n`);
        return 0;
      case "role":
        await people.updateUser(UserName.parse(name), { role: Role.parse(rest[0]) });
        process.stdout.write(`${name} is now ${rest[0]}.\n`);
        return 0;
      case "password": {
        const given = rest.includes("--password-stdin") ? Password.parse(await readLine()) : undefined;
        const password = given ?? (await import("../people/passwords")).generatePassword();
        await people.updateUser(UserName.parse(name), { password });
        if (!given) process.stdout.write(`New password (shown once): ${password}\n`);
        return 0;
      }
      case "disable":
      case "enable":
        await people.updateUser(UserName.parse(name), { disabled: action === "disable" });
        process.stdout.write(`${name} is ${action}d.\n`);
        return 0;
      case "token": {
        const user = (await people.listUsers()).find((candidate) => candidate.name === UserName.parse(name));
        if (!user) throw new Error(`No person named "${name}".`);
        const created = await people.createApiToken(user.id, { name: option(rest, "--label") ?? "cli" });
        process.stdout.write(`${created.token}\n`);
        return 0;
      }
      default:
        process.stderr.write(`Unknown users command "${action}".\n${USAGE}`);
        return 2;
    }
  } finally {
    await db.$disconnect();
  }
}

function option(args: string[], name: string): string | undefined {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
}

/** One line from stdin (a password piped in, never echoed or put on the command line). */
async function readLine(): Promise<string> {
  let text = "";
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.includes("\n")) break;
  }
  return text.split("\n")[0].replace(/\r$/, "");
}
