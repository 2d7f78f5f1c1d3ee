import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeBridgeRecord } from "../../../server/cli/bridge-record";
import { startTestBridge, type TestBridge } from "../helpers";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const UNBUILT_NATIVE = path.join(ROOT, "tests/integration/cli/fixtures/unbuilt-native.mjs");

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** `worldline …` from the checkout, with only the environment given (no DATABASE_URL, no model). */
function worldline(args: string[], env: Record<string, string>, nodeArgs: string[] = []): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...nodeArgs, "--import", "tsx", "server/cli/index.ts", ...args],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", NODE_ENV: "production", ...env },
        timeout: 60_000,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** One line on stderr, no stack trace. */
function oneLine(outcome: Outcome): string {
  const lines = outcome.stderr.split("\n").filter(Boolean);
  expect(lines, outcome.stderr).toHaveLength(1);
  expect(outcome.stderr).not.toMatch(/^\s+at /m);
  return lines[0];
}

let home: string;

beforeAll(async () => {
  home = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-cli-home-")));
});

describe("worldline's subcommands given bad input", () => {
  it("refuses an unknown flag of `acp` and of `runners` with one line and exit code 2", async () => {
    const acp = await worldline(["acp", "--bogus"], { WORLDLINE_HOME: home });
    expect(acp.code).toBe(2);
    expect(oneLine(acp)).toBe('worldline: Unknown option "--bogus". Run `worldline --help` for usage.');
    expect(acp.stdout).toBe("");

    const runners = await worldline(["runners", "list", "--bogus"], { WORLDLINE_HOME: home });
    expect(runners.code).toBe(2);
    expect(oneLine(runners)).toBe('worldline: Unknown option "--bogus". Run `worldline runners --help` for usage.');

    const flag = await worldline(["runners", "--bogus"], { WORLDLINE_HOME: home });
    expect(flag.code).toBe(2);
    expect(oneLine(flag)).toBe('worldline: Unknown option "--bogus". Run `worldline runners --help` for usage.');

    const unknown = await worldline(["runners", "frobnicate"], { WORLDLINE_HOME: home });
    expect(unknown.code).toBe(2);
    expect(oneLine(unknown)).toMatch(/^worldline: Unknown runners command "frobnicate"\./);
  });

  it("says once what to run when better-sqlite3 was not built, for every command that opens the database", async () => {
    for (const args of [["doctor"], ["users", "list"], ["runners", "list"]]) {
      const outcome = await worldline(args, { WORLDLINE_HOME: home }, ["--import", UNBUILT_NATIVE]);
      expect(outcome.code, args.join(" ")).toBe(1);
      expect(outcome.stderr, args.join(" ")).toMatch(
        /^worldline: better-sqlite3 is not built for this machine \(Could not locate the bindings file\.\)\.\n/,
      );
      expect(outcome.stderr).toContain("npm rebuild --prefix");
      expect(outcome.stderr).not.toContain("Tried:");
      expect(outcome.stderr).not.toMatch(/^\s+at /m);
    }
  });
});

describe("worldline next to the user's running bridge", () => {
  let bridge: TestBridge;
  let bridgeHome: string;
  let removeRecord: () => void;

  beforeAll(async () => {
    bridge = await startTestBridge();
    bridgeHome = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-cli-bridge-home-")));
    // The test process stands in for the bridge's pid (alive, and not the command's own).
    removeRecord = writeBridgeRecord(bridgeHome, {
      pid: process.pid,
      url: bridge.url,
      host: "127.0.0.1",
      port: bridge.port,
      token: bridge.token,
      version: "0.0.0-test",
      model: { WORLDLINE_MODEL: "old-model", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" },
    });
  });
  afterAll(async () => {
    removeRecord?.();
    await bridge?.stop();
  });

  it("`worldline serve` on its port says that it runs there and where, not that another program has the port", async () => {
    const outcome = await worldline(["serve", "--port", String(bridge.port)], { WORLDLINE_HOME: bridgeHome });
    expect(outcome.code).toBe(1);
    expect(oneLine(outcome)).toBe(
      `worldline: A Worldline bridge of yours is already running on port ${bridge.port} (pid ${process.pid}): open ${bridge.url}/?token=${bridge.token} , or stop it (Ctrl+C where it runs) to start a new one; --port <n> starts another beside it.`,
    );
    expect(outcome.stdout).toBe("");
  });

  it("says the running bridge keeps its own model settings when the caller's differ, naming no secret", async () => {
    const env = {
      WORLDLINE_HOME: bridgeHome,
      WORLDLINE_MODEL: "new-model",
      OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
      OPENAI_API_KEY: "sk-do-not-print-0123456789",
    };
    const outcome = await worldline([bridge.workspace], env);
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stdout).toMatch(new RegExp(`^Worldline ready: ${bridge.url}/s/[^?]+\\?token=`));
    const notice = outcome.stderr.split("\n").filter((line) => line.includes("model settings"));
    expect(notice).toEqual([
      `[worldline] It keeps the model settings it started with; your WORLDLINE_MODEL, OPENAI_API_KEY differ and are not used. To use yours, stop it (Ctrl+C where it runs, or kill ${process.pid}) and run worldline again, or run a separate one with --port <n> (or another WORLDLINE_HOME).`,
    ]);
    expect(outcome.stderr + outcome.stdout).not.toContain("sk-do-not-print");

    // The same settings as the bridge's, or none: nothing to say.
    for (const same of [
      { WORLDLINE_HOME: bridgeHome, WORLDLINE_MODEL: "old-model" } as Record<string, string>,
      { WORLDLINE_HOME: bridgeHome },
    ]) {
      const quiet = await worldline([bridge.workspace], same);
      expect(quiet.code, quiet.stderr).toBe(0);
      expect(quiet.stderr).not.toContain("model settings");
      expect(quiet.stdout).toBe(outcome.stdout);
    }
  });
});
