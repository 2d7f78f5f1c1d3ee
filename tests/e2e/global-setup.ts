import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Starts the scripted fake LLM and a real bridge (`worldline serve`, production
 * build) as child processes, and hands their addresses to the specs through env.
 */
export default async function globalSetup(): Promise<() => Promise<void>> {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
  const home = await fs.mkdtemp(path.join(os.tmpdir(), "wl-e2e-home-"));
  const workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-e2e-ws-")));
  await fs.writeFile(path.join(workspace, "README.md"), "# e2e workspace\n");

  const fake = spawn(
    process.execPath,
    [path.join(root, "node_modules/tsx/dist/cli.mjs"), "tests/fake-llm/cli.ts", "--port", "0"],
    {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const fakeUrl = (await readyLine(fake, /^fake-llm ready: (\S+)/))[1];

  const token = "e2e-token-0123456789abcdef";
  const bridge = spawn(process.execPath, [path.join(root, "bin/worldline.mjs"), "serve"], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
    env: {
      ...process.env,
      PORT: "0",
      WORLDLINE_HOME: home,
      WORLDLINE_TOKEN: token,
      OPENAI_BASE_URL: fakeUrl,
      OPENAI_API_KEY: "e2e-key",
      WORLDLINE_MODEL: "fake-model",
    },
  });
  const readyUrl = (await readyLine(bridge, /^Worldline ready: (\S+)/, 240_000))[1];

  process.env.WL_E2E_READY_URL = readyUrl;
  process.env.WL_E2E_BASE_URL = new URL(readyUrl).origin;
  process.env.WL_E2E_TOKEN = token;
  process.env.WL_E2E_FAKE_URL = fakeUrl;
  process.env.WL_E2E_WORKSPACE = workspace;
  process.env.WL_E2E_HOME = home;

  return async () => {
    bridge.kill("SIGTERM");
    fake.kill("SIGTERM");
    await Promise.all([exited(bridge), exited(fake)]);
  };
}

function readyLine(child: ChildProcess, pattern: RegExp, timeoutMs = 30_000): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let buffer = "";
    const timer = setTimeout(
      () => reject(new Error(`no ready line matching ${pattern} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    child.stdout!.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      for (const line of buffer.split("\n")) {
        const match = pattern.exec(line.trim());
        if (match) {
          clearTimeout(timer);
          resolve(match);
        }
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`process exited with ${code} before its ready line`));
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}
