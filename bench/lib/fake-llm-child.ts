/**
 * The scripted fake LLM (tests/fake-llm) in its own process, as a real provider is: a
 * baseline call to it crosses a process boundary like the bridge's call does. The child
 * prints its URL as one line; script it over POST /__admin/script.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startFakeLlm } from "../../tests/fake-llm/server.ts";
import { firstLine, ROOT, stopChild } from "./bridge-child.ts";
import { isMain } from "./cli.ts";

export interface FakeLlmProcess {
  child: ChildProcess;
  /** The OpenAI base URL (ends in /v1). */
  url: string;
  /** Queues responses, as `FakeLlm.script` does in-process. */
  script(...responses: unknown[]): Promise<void>;
  stop(): Promise<void>;
}

export async function startFakeLlmProcess(): Promise<FakeLlmProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url)], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = (await firstLine(child, 30_000)).trim();
  return {
    child,
    url,
    async script(...responses) {
      const response = await fetch(new URL("/__admin/script", url), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(responses),
      });
      if (!response.ok) throw new Error(`fake LLM script: ${response.status} ${await response.text()}`);
    },
    stop: () => stopChild(child),
  };
}

if (isMain(import.meta.url)) {
  const fake = await startFakeLlm();
  process.stdout.write(`${fake.url}\n`);
  process.once("SIGTERM", () => void fake.close().finally(() => process.exit(0)));
}
