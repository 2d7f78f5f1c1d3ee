import { createServer } from "node:http";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  findRunningBridge,
  modelDifferences,
  modelEnvironment,
  writeBridgeRecord,
} from "../../../server/cli/bridge-record";
import { openFolderSession, resolveFolder, type FolderSessions } from "../../../server/cli/folder";
import { CliError, EXIT_USAGE, parseStartArgs } from "../../../server/cli/options";

function usageError(run: () => unknown): CliError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    return error as CliError;
  }
  throw new Error("no error thrown");
}

describe("worldline's command line", () => {
  it("reads the folder and the flags users type", () => {
    expect(parseStartArgs(["../app", "--open", "--port", "0", "--host", "::1"], { folder: true })).toEqual({
      folder: "../app",
      open: true,
      port: "0",
      host: "::1",
      help: false,
      version: false,
    });
    expect(parseStartArgs(["-p", "4478", "-v"], { folder: true })).toMatchObject({ port: "4478", version: true });
  });

  it("refuses what it does not know in one line with exit code 2", () => {
    const cases: [string[], boolean, RegExp][] = [
      [["--frobnicate"], true, /^Unknown option "--frobnicate"\. Run `worldline --help` for usage\.$/],
      [["--port"], true, /^Option "--port" needs a value\./],
      [["--open=yes"], true, /^Option "--open" takes no value\./],
      [["--port", "70000"], true, /^--port must be a number from 0 to 65535/],
      [["--port", "80a"], true, /^--port must be a number/],
      [["a", "b"], true, /^Unexpected argument "b"\./],
      [["somewhere"], false, /^Unexpected argument "somewhere"\./],
    ];
    for (const [argv, folder, message] of cases) {
      const error = usageError(() => parseStartArgs(argv, { folder }));
      expect(error.message).toMatch(message);
      expect(error.message).not.toContain("\n");
      expect(error.exitCode).toBe(EXIT_USAGE);
    }
  });
});

describe("the folder `worldline` opens", () => {
  const dirs: string[] = [];
  const cwd = process.cwd();
  afterEach(() => {
    process.chdir(cwd);
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });
  const tempDir = () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "wl-cli-")));
    dirs.push(dir);
    return dir;
  };

  it("is the current folder, or the argument, as a real path", () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, "sub"));
    fs.symlinkSync(path.join(dir, "sub"), path.join(dir, "link"));
    process.chdir(dir);
    expect(resolveFolder(undefined)).toBe(dir);
    expect(resolveFolder("link")).toBe(path.join(dir, "sub"));
  });

  it("says what is wrong with a folder that is not one", () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, "file.txt"), "");
    process.chdir(dir);
    expect(usageError(() => resolveFolder("./missing")).message).toBe(`The folder ${dir}/missing does not exist.`);
    expect(usageError(() => resolveFolder("servee")).message).toMatch(/^Unknown command "servee"/);
    expect(usageError(() => resolveFolder("file.txt")).exitCode).toBe(EXIT_USAGE);
  });
});

describe("the records of running bridges", () => {
  it("finds a live bridge that answers, and drops records of bridges that are gone", async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "wl-records-"));
    const server = createServer((req, res) => {
      res.writeHead(req.url === "/api/v1/health" ? 200 : 404, { "content-type": "application/json" });
      res.end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const record = { url: `http://127.0.0.1:${port}`, host: "127.0.0.1", port, token: "t".repeat(32), version: "0" };
      // The test runner's parent stands in for the live bridge (any live pid that is not this process).
      writeBridgeRecord(home, { ...record, pid: process.ppid });
      // A pid that cannot be alive: its record goes.
      writeBridgeRecord(home, { ...record, pid: 2 ** 22 + 1 });
      // Another port was asked for: every record is looked at, none fits.
      expect(await findRunningBridge(home, { port: port + 1 })).toBeUndefined();
      expect(fs.readdirSync(path.join(home, "run", "bridges"))).toEqual([`${process.ppid}.json`]);
      expect(await findRunningBridge(home, {})).toMatchObject({ pid: process.ppid, port });
      expect(await findRunningBridge(home, { host: "::1" })).toBeUndefined();
      const remove = writeBridgeRecord(home, { ...record, pid: process.ppid });
      remove();
      expect(await findRunningBridge(home, {})).toBeUndefined();
    } finally {
      server.close();
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});

describe("the session `worldline` opens for a folder", () => {
  it("is the latest local one on that folder, never a runner's folder of the same path nor an archived one", async () => {
    const created: string[] = [];
    const sessions = (list: Awaited<ReturnType<FolderSessions["list"]>>): FolderSessions => ({
      list: async () => list,
      create: async (folder) => {
        created.push(folder);
        return { id: "new" };
      },
    });
    const runnerOne = { id: "on-runner", workspace: "/code/app", archived: false, runner: "devbox" };
    const archived = { id: "archived", workspace: "/code/app", archived: true, runner: null };
    const local = { id: "local", workspace: "/code/app", archived: false, runner: null };
    expect(await openFolderSession(sessions([runnerOne, archived, local]), "/code/app")).toBe("/s/local");
    expect(await openFolderSession(sessions([runnerOne, archived]), "/code/app")).toBe("/s/new");
    expect(created).toEqual(["/code/app"]);
  });
});

describe("the model settings a running bridge keeps", () => {
  const record = { pid: 1, url: "http://127.0.0.1:1", host: "127.0.0.1", port: 1, token: "t", version: "0" };

  it("records the model variables that are set, the key as a fingerprint only", () => {
    const env = { WORLDLINE_MODEL: "m", OPENAI_API_KEY: "sk-secret", OPENAI_BASE_URL: "", PATH: "/bin" };
    const recorded = modelEnvironment(env);
    expect(Object.keys(recorded)).toEqual(["WORLDLINE_MODEL", "OPENAI_API_KEY"]);
    expect(recorded.OPENAI_API_KEY).toMatch(/^sha256:[0-9a-f]{16}$/);
    expect(JSON.stringify(recorded)).not.toContain("sk-secret");
  });

  it("names what the caller set otherwise, and nothing when the caller set nothing or the record predates it", () => {
    const running = { ...record, model: modelEnvironment({ WORLDLINE_MODEL: "old", OPENAI_API_KEY: "k1" }) };
    expect(modelDifferences(modelEnvironment({ WORLDLINE_MODEL: "old", OPENAI_API_KEY: "k1" }), running)).toEqual([]);
    expect(modelDifferences(modelEnvironment({ OPENAI_API_KEY: "k2" }), running)).toEqual(["OPENAI_API_KEY"]);
    expect(
      modelDifferences(modelEnvironment({ WORLDLINE_MODEL: "new", OPENAI_BASE_URL: "http://x/v1" }), running),
    ).toEqual(["WORLDLINE_MODEL", "OPENAI_BASE_URL"]);
    expect(modelDifferences(modelEnvironment({}), running)).toEqual([]);
    expect(modelDifferences(modelEnvironment({ WORLDLINE_MODEL: "new" }), record)).toEqual([]);
  });
});
