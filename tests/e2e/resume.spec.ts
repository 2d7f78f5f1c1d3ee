import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { RESUME_PROMPT } from "../../components/session/resume";
// The fixtures' `test` empties the fake model's queue first: an earlier spec's leftover reply would answer this one.
import { e2e, expect, freshWorkspace, scriptLlm, test } from "./fixtures";

/**
 * Restart safety, with a bridge killed (SIGKILL, no shutdown): a turn waiting on an approval
 * still waits on the next bridge, its card still pending, and Allow finishes the same turn; a
 * turn killed mid-stream is shown interrupted, and Resume continues the task in a new turn.
 */
const TOKEN = "e2e-resume-token-0123456789";

async function startBridge(home: string): Promise<{ child: ChildProcess; readyUrl: string; baseUrl: string }> {
  const child = spawn(process.execPath, ["bin/worldline.mjs", "serve"], {
    cwd: process.cwd(),
    stdio: ["ignore", "pipe", "inherit"],
    env: {
      ...process.env,
      PORT: "0",
      WORLDLINE_HOME: home,
      WORLDLINE_TOKEN: TOKEN,
      OPENAI_BASE_URL: e2e.fakeUrl,
      OPENAI_API_KEY: "e2e-key",
      WORLDLINE_MODEL: "fake-model",
    },
  });
  const readyUrl = await new Promise<string>((resolve, reject) => {
    let buffer = "";
    const timer = setTimeout(() => reject(new Error("the bridge printed no ready line")), 240_000);
    child.stdout!.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      const match = /Worldline ready: (\S+)/.exec(buffer);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once("exit", (code) => reject(new Error(`the bridge exited with ${code}`)));
  });
  return { child, readyUrl, baseUrl: new URL(readyUrl).origin };
}

function killed(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

async function newSession(baseUrl: string, workspace: string, title: string): Promise<string> {
  const response = await fetch(`${baseUrl}/api/v1/sessions`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ workspace, title }),
  });
  return ((await response.json()) as { id: string }).id;
}

test("a turn waiting on an approval when the bridge died still waits, and Allow finishes it", async ({ page }) => {
  test.setTimeout(480_000);
  const home = await fs.mkdtemp(path.join(os.tmpdir(), "wl-e2e-resume-"));
  const workspace = await freshWorkspace("ide-resume");
  let bridge = await startBridge(home);
  try {
    const sessionId = await newSession(bridge.baseUrl, workspace, "Waiting across a restart");
    await page.goto(bridge.readyUrl);
    await page.goto(`${bridge.baseUrl}/s/${sessionId}`);
    await expect(page.getByTestId("connection-state")).toContainText("live");

    await scriptLlm(
      { toolCalls: [{ name: "shell", arguments: { command: "touch made-by-agent.txt" } }] },
      { text: "Done: the file is made." },
    );
    await page.getByTestId("prompt-input").fill("make the file");
    await page.getByTestId("prompt-input").press("Enter");
    await expect(page.getByTestId("approval-card")).toBeVisible();

    // A crash, not a shutdown: nothing gets to settle the turn.
    await killed(bridge.child);
    bridge = await startBridge(home);
    await page.goto(bridge.readyUrl);
    await page.goto(`${bridge.baseUrl}/s/${sessionId}`);
    const card = page.getByTestId("approval-card");
    await expect(card.getByTestId("approval-allow-once")).toBeVisible();
    await expect(page.getByTestId("turn-interrupted")).toHaveCount(0);
    await page.screenshot({ path: "/tmp/ide-resume.png" });

    await card.getByTestId("approval-allow-once").click();
    await expect(page.getByTestId("message-text").last()).toContainText("the file is made");
    await fs.access(path.join(workspace, "made-by-agent.txt"));
    // The same turn went on: no second user message, nothing to resume.
    await expect(page.getByTestId("message-user")).toHaveCount(1);
    await expect(page.getByTestId("resume-turn")).toHaveCount(0);
  } finally {
    await killed(bridge.child);
  }
});

test("a turn killed mid-stream is shown interrupted and can be resumed", async ({ page }) => {
  test.setTimeout(480_000);
  const home = await fs.mkdtemp(path.join(os.tmpdir(), "wl-e2e-resume-"));
  const workspace = await freshWorkspace("ide-resume-stream");
  let bridge = await startBridge(home);
  try {
    const sessionId = await newSession(bridge.baseUrl, workspace, "Resume after restart");
    await page.goto(bridge.readyUrl);
    await page.goto(`${bridge.baseUrl}/s/${sessionId}`);
    await expect(page.getByTestId("connection-state")).toContainText("live");

    // Still streaming when the bridge dies (a minute of text).
    await scriptLlm({ text: "Starting on it. ".repeat(50), chunkSize: 4, delayMs: 300 });
    await page.getByTestId("prompt-input").fill("make the file");
    await page.getByTestId("prompt-input").press("Enter");
    await expect(page.getByTestId("message-text").last()).toContainText("Starting");

    await killed(bridge.child);
    bridge = await startBridge(home);
    await page.goto(bridge.readyUrl);
    await page.goto(`${bridge.baseUrl}/s/${sessionId}`);
    const interrupted = page.getByTestId("turn-interrupted");
    await expect(interrupted).toBeVisible();
    await expect(page.getByTestId("notice").filter({ hasText: "interrupted" })).toBeVisible();

    await scriptLlm({ text: "Picking up again: the file is made." });
    await interrupted.getByTestId("resume-turn").click();
    await expect(page.getByTestId("message-text").last()).toContainText("Picking up again");
    await expect(page.getByTestId("message-user").last()).toContainText(RESUME_PROMPT.slice(0, 30));
    // Resumed: the offer is gone (the notice of the interruption stays).
    await expect(page.getByTestId("resume-turn")).toHaveCount(0);
    await expect(interrupted).toHaveCount(0);
  } finally {
    await killed(bridge.child);
  }
});
