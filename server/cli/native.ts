import { createRequire } from "node:module";
import path from "node:path";
import { CliError } from "./options";

/**
 * The two dependencies that are compiled for the machine when installed (by their npm install
 * scripts). npm 11 lists install scripts it was not told to allow, and a stricter npm (or
 * `--ignore-scripts`) skips them: the package then installs fine and fails on first use with a
 * "bindings file" error. Loading them first turns that into one line saying what to run, once.
 */
const NATIVE_MODULES = ["better-sqlite3", "node-pty"] as const;
type NativeModule = (typeof NATIVE_MODULES)[number];

/** `worldline runner` holds no database: only its terminals' node-pty must load. */
export const RUNNER_NATIVE_MODULES: readonly NativeModule[] = ["node-pty"];

/**
 * The commands that open the database (`users`, `runners`, `doctor`): better-sqlite3 when it is
 * SQLite; PostgreSQL (DATABASE_URL) needs no native module.
 */
export function checkDatabaseModules(databaseUrl: string | undefined): void {
  if (!databaseUrl) checkNativeModules(["better-sqlite3"]);
}

export function checkNativeModules(modules: readonly NativeModule[] = NATIVE_MODULES): void {
  const require = createRequire(import.meta.url);
  const broken: { name: string; problem: string; dir: string }[] = [];
  for (const name of modules) {
    let dir = "";
    try {
      dir = path.dirname(require.resolve(`${name}/package.json`));
      if (name === "better-sqlite3") {
        const Database = require(name) as new (file: string) => { close(): void };
        new Database(":memory:").close();
      } else require(name);
    } catch (error) {
      // The first line says what is missing ("Could not locate the bindings file. Tried:"), the rest lists paths.
      const problem = ((error as Error).message ?? String(error)).split("\n")[0].replace(/\s*Tried:$/, "");
      broken.push({ name, problem, dir });
    }
  }
  if (broken.length === 0) return;
  const names = broken.map((entry) => entry.name);
  // The folder whose node_modules holds them: `npm rebuild` there runs their build scripts.
  const project = broken[0].dir ? path.resolve(broken[0].dir, "..", names[0].startsWith("@") ? "../.." : "..") : "";
  throw new CliError(
    [
      `${names.join(" and ")} ${names.length > 1 ? "are" : "is"} not built for this machine (${broken[0].problem}).`,
      "npm did not run their install scripts (npm 11 asks you to allow them). Build them once with:",
      `  npm rebuild --prefix "${project}" ${names.join(" ")} --foreground-scripts`,
      `To let npm build them in later installs (npx, npm install -g): npm config set allow-scripts=${NATIVE_MODULES.join(",")} --location=user`,
    ].join("\n"),
  );
}
