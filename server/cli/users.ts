import { loadConfig } from "../config";
import { People } from "../people";
import { generatePassword } from "../people/passwords";
import { Password, Role, UserName, type UserView } from "../protocol";
import { findRunningBridge, type BridgeRecord } from "./bridge-record";
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
  // A running bridge on this home's SQLite file is asked over its API: its database stays its own.
  const running = config.databaseUrl ? undefined : await findRunningBridge(config.home, {});
  if (running && action !== "token") return usersOverHttp(running, action, name, rest);
  checkDatabaseModules(config.databaseUrl);
  const { db } = await store.openDb(config.home, config.databaseUrl);
  const people = new People(db, { oidc: config.oidc !== null, oidcDefaultRole: config.oidcDefaultRole });
  try {
    if (action === "token") {
      const user = (await people.listUsers()).find((candidate) => candidate.name === UserName.parse(name));
      if (!user) throw new Error(`No person named "${name}".`);
      const created = await people.createApiToken(user.id, { name: option(rest, "--label") ?? "cli" });
      process.stdout.write(`${created.token}\n`);
      return 0;
    }
    return await runUsersAction(
      {
        add: (input) => people.addUser(input),
        list: () => people.listUsers(),
        update: (who, patch) => people.updateUser(who, patch),
      },
      action,
      name,
      rest,
    );
  } finally {
    await db.$disconnect();
  }
}

/** What `worldline users` changes, in this process's People or through a running hub's /api/v1/users. */
interface UsersPort {
  add(input: { name: string; role: Role; password?: string }): Promise<{ user: UserView; password: string }>;
  list(): Promise<UserView[]>;
  update(name: string, patch: { role?: Role; password?: string; disabled?: boolean }): Promise<UserView>;
}

async function runUsersAction(users: UsersPort, action: string, name: string | undefined, rest: string[]) {
  switch (action) {
    case "add": {
      const role = Role.parse(option(rest, "--role"));
      const given = rest.includes("--password-stdin") ? Password.parse(await readLine()) : undefined;
      const { user, password } = await users.add({ name: UserName.parse(name), role, password: given });
      process.stdout.write(`Added ${user.name} (${user.role}).\n`);
      if (!given) process.stdout.write(`Password (shown once): ${password}\n`);
      return 0;
    }
    case "list":
      for (const user of await users.list())
        process.stdout.write(`${user.name}\t${user.role}${user.disabled ? "\tdisabled" : ""}\n`);
      return 0;
    case "role":
      await users.update(UserName.parse(name), { role: Role.parse(rest[0]) });
      process.stdout.write(`${name} is now ${rest[0]}.\n`);
      return 0;
    case "password": {
      const given = rest.includes("--password-stdin") ? Password.parse(await readLine()) : undefined;
      const password = given ?? generatePassword();
      await users.update(UserName.parse(name), { password });
      if (!given) process.stdout.write(`New password (shown once): ${password}\n`);
      return 0;
    }
    case "disable":
    case "enable":
      await users.update(UserName.parse(name), { disabled: action === "disable" });
      process.stdout.write(`${name} is ${action}d.\n`);
      return 0;
    default:
      process.stderr.write(`Unknown users command "${action}".\n${USAGE}`);
      return 2;
  }
}

/**
 * The running hub's own API, with its launch token (its record in WORLDLINE_HOME, readable by this
 * user only). Opening its SQLite file from a second process is safe in itself, but the hub is the
 * one place that sees every change at once (signed-in people, open sockets).
 */
async function usersOverHttp(running: BridgeRecord, action: string, name: string | undefined, rest: string[]) {
  const call = async <T>(method: string, pathname: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${running.url}${pathname}`, {
      method,
      headers: {
        authorization: `Bearer ${running.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = (await response.json().catch(() => ({}))) as T & { error?: { message?: string } };
    if (!response.ok) throw new Error(answer.error?.message ?? `The hub answered ${response.status}.`);
    return answer;
  };
  return runUsersAction(
    {
      add: (input) => call("POST", "/api/v1/users", input),
      list: () => call("GET", "/api/v1/users"),
      update: (who, patch) => call("PATCH", `/api/v1/users/${encodeURIComponent(who)}`, patch),
    },
    action,
    name,
    rest,
  );
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
