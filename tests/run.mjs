// `npm test`: everything CI checks, on a fresh machine by itself. Names any missing system program
// with the apt-get install that brings it; starts a private PostgreSQL and Redis when nothing answers
// on their usual addresses (and removes them after); runs the checks, two at a time where they share
// nothing; prints each step's time and the total. tests/README.md says what runs where.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { register } from "tsx/esm/api";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const POSTGRES = "postgresql://postgres@127.0.0.1:5432";
const REDIS = "redis://127.0.0.1:6379";
const started = performance.now();

/** The newest Debian PostgreSQL server's bin folder (PG_BIN overrides), or undefined. */
function postgresBin() {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const versions = existsSync("/usr/lib/postgresql") ? readdirSync("/usr/lib/postgresql") : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  return newest && existsSync(`/usr/lib/postgresql/${newest}/bin/initdb`)
    ? `/usr/lib/postgresql/${newest}/bin`
    : undefined;
}

const onPath = (program) => spawnSync("sh", ["-c", `command -v ${program}`], { stdio: "ignore" }).status === 0;

/** [what is missing, the Debian package that brings it] for each system program the tests run. */
function missingPrograms() {
  const chromium = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
  return [
    [existsSync(chromium) || onPath("chromium"), `Chromium (${chromium}; or set CHROMIUM_PATH)`, "chromium"],
    [postgresBin() !== undefined, "the PostgreSQL server binaries (initdb, pg_ctl)", "postgresql"],
    [onPath("redis-server"), "redis-server", "redis-server"],
    [onPath("sqlite3"), "sqlite3", "sqlite3"],
    [onPath("rg"), "rg (ripgrep)", "ripgrep"],
    [onPath("git"), "git", "git"],
  ].flatMap(([present, what, pkg]) => (present ? [] : [[what, pkg]]));
}

/** True when something accepts a TCP connection on 127.0.0.1:port. */
function answers(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.setTimeout(2000, () => socket.destroy());
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
    socket.once("close", () => resolve(false));
  });
}

/** Why the server at `url` cannot serve the tests (nothing answers, or it wants a password), or undefined. */
async function postgresRefuses(url) {
  if (!(await answers(5432))) return "does not answer";
  const client = new pg.Client({ connectionString: `${url}/postgres`, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return undefined;
  } catch (error) {
    return `refuses the postgres user without a password (${error.message})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** How much of a step's output is kept to print again at the end if it fails: its failures' report. */
const TAIL_LINES = 150;
const TAIL_CHARS = 40_000;

/**
 * Runs one command, its output passed through as it comes; resolves with its exit code, how long it
 * took and its last lines (a failed step's report is printed again after every step, where a
 * reader of the run's end sees it).
 */
function step(name, command, args, env = {}) {
  return new Promise((resolve) => {
    const begin = performance.now();
    process.stderr.write(`[test] ${name}: started\n`);
    const child = spawn(command, args, {
      cwd: root,
      stdio: ["inherit", "pipe", "pipe"],
      // Piped, so a step's colours are asked for when this run's own output is a terminal.
      env: { ...(process.stdout.isTTY ? { FORCE_COLOR: "1" } : {}), ...process.env, ...env },
    });
    let tail = "";
    const keep = (out) => (chunk) => {
      out.write(chunk);
      tail = (tail + chunk).slice(-TAIL_CHARS);
    };
    child.stdout.setEncoding("utf8").on("data", keep(process.stdout));
    child.stderr.setEncoding("utf8").on("data", keep(process.stderr));
    // Its last output once its pipes close; a process it left behind holding them is cut off after 2 s.
    const closed = new Promise((settle) => child.once("close", settle));
    child.once("exit", async (code, signal) => {
      await Promise.race([closed, new Promise((settle) => setTimeout(settle, 2000))]);
      child.stdout.destroy();
      child.stderr.destroy();
      const seconds = (performance.now() - begin) / 1000;
      const ok = code === 0;
      process.stderr.write(
        `[test] ${name}: ${ok ? "passed" : `FAILED (${code ?? signal})`} in ${seconds.toFixed(0)} s\n`,
      );
      resolve({ name, ok, seconds, tail: tail.split("\n").slice(-TAIL_LINES).join("\n") });
    });
  });
}

const npmRun = (script) => ["npm", ["run", "--silent", script]];

async function main() {
  const missing = missingPrograms();
  if (missing.length > 0) {
    for (const [what] of missing) process.stderr.write(`[test] missing: ${what}\n`);
    process.stderr.write(`[test] install them with: apt-get install -y ${missing.map(([, pkg]) => pkg).join(" ")}\n`);
    return 1;
  }

  register();
  const { startPostgres, startRedis } = await import("./faults/services.ts");
  const owned = [];
  const env = {};
  try {
    const refused = process.env.WORLDLINE_TEST_POSTGRES ? undefined : await postgresRefuses(POSTGRES);
    if (refused) {
      const pg = await startPostgres();
      owned.push(pg);
      env.WORLDLINE_TEST_POSTGRES = pg.url("").replace(/\/$/, "");
      process.stderr.write(`[test] ${POSTGRES} ${refused}: a private PostgreSQL on port ${pg.port}\n`);
    }
    if (!process.env.REDIS_URL && !(await answers(6379))) {
      const redis = await startRedis();
      owned.push(redis);
      env.REDIS_URL = redis.url;
      process.stderr.write(`[test] nothing answers on 127.0.0.1:6379: a private Redis at ${redis.url}\n`);
    }
    const postgres = env.WORLDLINE_TEST_POSTGRES ?? process.env.WORLDLINE_TEST_POSTGRES ?? POSTGRES;
    const redis = env.REDIS_URL ?? process.env.REDIS_URL ?? REDIS;
    const results = [];
    // Two at a time on two cores: the type check beside the linters; the SQLite pass (unit and
    // integration files two at once); the PostgreSQL pass, then the faults (their own clusters),
    // beside the serial integration files on SQLite, then the UI build; the browser beside the
    // installed package (each uses that build). Each pair passed together: the serial files beside
    // the PostgreSQL pass took 335 s and 235 s, against 221 s and 237 s one after the other. The
    // serial files beside the browser made both far slower (e2e 737 s against 367 s), and a second
    // browser worker gained nothing (e2e keeps both cores busy). `npm test -- faults e2e` runs only
    // those steps.
    // Redis only when this run started its own: a test's `worldline acp` child that inherited
    // REDIS_URL joined a team its in-process web bridge (no Redis) was not in.
    const sqliteEnv = { WORLDLINE_TEST_POSTGRES: "", ...(env.REDIS_URL ? { REDIS_URL: env.REDIS_URL } : {}) };
    const vitest = (name, projects, stepEnv) =>
      step(name, "npx", ["vitest", "run", ...projects.flatMap((project) => ["--project", project])], stepEnv);
    const steps = {
      typecheck: () => step("typecheck", ...npmRun("typecheck")),
      lint: () => step("lint", ...npmRun("lint")),
      sqlite: () => vitest("unit + integration (SQLite)", ["unit", "unit-mocking", "integration"], sqliteEnv),
      serial: () => vitest("serial integration (SQLite)", ["integration-serial"], sqliteEnv),
      postgres: () =>
        step("integration (PostgreSQL)", ...npmRun("test:integration:postgres"), {
          WORLDLINE_TEST_POSTGRES: postgres,
          REDIS_URL: redis,
        }),
      faults: () => step("faults", ...npmRun("test:faults")),
      // The production UI build (server/cli/build.ts) that e2e and the package both use, made once
      // before them: side by side, each would start `next build` into the same .next/.
      ui: () =>
        step("web UI build", process.execPath, [
          "--import",
          "tsx",
          "--input-type=module",
          "-e",
          'const { ensureBuilt } = await import("./server/cli/build.ts"); ensureBuilt(process.cwd(), (line) => process.stderr.write(`[ui] ${line}\\n`));',
        ]),
      e2e: () => step("e2e", ...npmRun("test:e2e")),
      install: () => step("install", ...npmRun("test:install")),
    };
    const run = async (...running) => {
      const done = (await Promise.all(running)).flat();
      results.push(...done);
      return done.every((result) => result.ok);
    };
    const wanted = process.argv.slice(2);
    const unknown = wanted.filter((name) => !(name in steps));
    if (unknown.length > 0) {
      process.stderr.write(`[test] no step ${unknown.join(", ")}; the steps: ${Object.keys(steps).join(" ")}\n`);
      return 2;
    }
    // The UI build goes with whichever of e2e and install is asked for, the serial files with sqlite.
    const asked = (name) =>
      !wanted.length ||
      wanted.includes(name) ||
      (name === "ui" && (wanted.includes("e2e") || wanted.includes("install"))) ||
      (name === "serial" && wanted.includes("sqlite"));
    /** One after another, in a lane; a pass's lanes side by side. */
    const lane = async (names) => {
      const done = [];
      for (const name of names) done.push(await steps[name]());
      return done;
    };
    const passes = [
      [["typecheck"], ["lint"]],
      [["sqlite"]],
      [
        ["postgres", "faults"],
        ["serial", "ui"],
      ],
      [["e2e"], ["install"]],
    ].map(
      (lanes) => () =>
        run(
          ...lanes
            .map((names) => names.filter(asked))
            .filter((names) => names.length)
            .map(lane),
        ),
    );
    let ok = true;
    // Every pass runs even after one failed, so one run reports every failure.
    for (const pass of passes) ok = (await pass()) && ok;
    const total = (performance.now() - started) / 1000;
    for (const result of results.filter((result) => !result.ok))
      process.stderr.write(`\n[test] the end of ${result.name}'s output, which failed:\n${result.tail}\n`);
    for (const result of results)
      process.stderr.write(`[test] ${result.ok ? "ok    " : "FAILED"} ${result.name} ${result.seconds.toFixed(0)} s\n`);
    const failed = results.filter((result) => !result.ok).length;
    process.stdout.write(`steps: ${results.length - failed} passed, ${failed} failed\n`);
    process.stderr.write(`[test] total ${Math.floor(total / 60)} min ${Math.round(total % 60)} s\n`);
    return ok ? 0 : 1;
  } finally {
    for (const service of owned.reverse()) await service.destroy().catch(() => undefined);
  }
}

process.exitCode = await main();
