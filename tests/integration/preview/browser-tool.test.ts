import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { startApprovalBridge, type ApprovalBridge } from "../approvals/support";
import { emitCommand, uniqueId, waitFor } from "../helpers";
import { createBrowserTool } from "../../../server/tools/browser";
import { MAX_IMAGE_SIDE } from "../../../server/preview/browsers";
import { freePort } from "../../support/ports";
import { DEV_SERVER } from "./support";

let fake: FakeLlm;
let bridge: ApprovalBridge;
let dev: ChildProcess;
let devPort: number;
let silent: Server;
let silentPort: number;

type Message = { role: string; content: unknown };
const messagesOf = (n: number) => (fake.requests[n].body as { messages: Message[] }).messages;
const toolOutputs = (n: number) =>
  messagesOf(n)
    .filter((m) => m.role === "tool")
    .map((m) => String(m.content));

/** Chromium's first launch and a 15 s page timeout take longer than the shared helper waits on a loaded machine. */
async function turnCompleted(sessionId: string): Promise<{ outcome: string }> {
  const done = await waitFor(
    async () => (await bridge.events(sessionId)).find((event) => event.type === "turn.completed"),
    60_000,
    "turn.completed",
  );
  return done.payload as { outcome: string };
}

beforeAll(async () => {
  fake = await startFakeLlm();
  // The bridge's own Chromium (services.browsers), which knows its previews, drives the tool.
  bridge = await startApprovalBridge(fake.url, { tools: () => [createBrowserTool(bridge.services.browsers!)] });
  devPort = await freePort();
  dev = spawn(process.execPath, [DEV_SERVER, String(devPort)], { cwd: bridge.workspace, stdio: "ignore" });
  await waitFor(
    async () => (await fetch(`http://127.0.0.1:${devPort}/small`).catch(() => null))?.ok,
    20_000,
    "the dev server",
  );
  // Accepts connections and never answers: a page that never loads.
  silent = createServer(() => undefined);
  silentPort = await freePort();
  await new Promise<void>((resolve) => silent.listen(silentPort, "127.0.0.1", resolve));
}, 60_000);

afterAll(async () => {
  dev?.kill();
  silent?.close();
  await bridge?.stop();
  await fake?.close();
}, 60_000);

describe("the browser tool", () => {
  it("navigates, screenshots (the image to the model and the transcript), clicks, types, reads and shows the console", async () => {
    const sessionId = await bridge.createSession();
    const page = `http://127.0.0.1:${devPort}/`;
    fake.script(
      { toolCalls: [{ name: "browser", arguments: { action: "navigate", url: page } }] },
      { toolCalls: [{ name: "browser", arguments: { action: "screenshot" } }] },
      { toolCalls: [{ name: "browser", arguments: { action: "click", selector: "#go" } }] },
      { toolCalls: [{ name: "browser", arguments: { action: "type", selector: "#name", text: "Ada" } }] },
      { toolCalls: [{ name: "browser", arguments: { action: "read", selector: "#title" } }] },
      { toolCalls: [{ name: "browser", arguments: { action: "console" } }] },
      { text: "The page works." },
    );
    const socket = await bridge.socket();
    await emitCommand(socket, "turn.prompt", { commandId: uniqueId(), sessionId, text: "check the page" });
    expect((await turnCompleted(sessionId)).outcome).toBe("completed");
    // No approval was asked: loopback is free.
    expect(await bridge.pending()).toHaveLength(0);

    expect(toolOutputs(1)[0]).toContain(`Opened ${page} (status 200): "Dev page"`);
    // After the screenshot's result, the image follows as a user message.
    const afterShot = messagesOf(2);
    expect(toolOutputs(2)[1]).toMatch(/Screenshot of .* \(1280×800\)/);
    const imageMessage = afterShot.at(-1)!;
    expect(imageMessage.role).toBe("user");
    const parts = imageMessage.content as { type: string; image_url?: { url: string } }[];
    expect(parts[1].image_url!.url).toMatch(/^data:image\/png;base64,iVBOR/);
    expect(toolOutputs(3)[2]).toContain("Clicked #go");
    expect(toolOutputs(4)[3]).toContain("Typed 3 characters into #name");
    expect(toolOutputs(5)[4]).toContain("Clicked");
    expect(toolOutputs(6)[5]).toContain("[log] dev page loaded");

    const events = await bridge.events(sessionId);
    const shot = events.find(
      (e) => e.type === "tool.state" && (e.payload.display as { screenshot?: string })?.screenshot,
    );
    expect((shot!.payload.display as { screenshot: string }).screenshot).toMatch(/^data:image\/jpeg;base64,/);
    // The full image is for the model only: the event log keeps the small copy.
    expect(JSON.stringify(events)).not.toContain(parts[1].image_url!.url.slice(0, 200));
  }, 90_000);

  it("asks before opening a foreign host, and a rejection's reason goes back to the model", async () => {
    const sessionId = await bridge.createSession();
    fake.reset();
    fake.script(
      { toolCalls: [{ name: "browser", arguments: { action: "navigate", url: "https://example.invalid/docs" } }] },
      { text: "Understood." },
    );
    const socket = await bridge.socket();
    await emitCommand(socket, "turn.prompt", { commandId: uniqueId(), sessionId, text: "look it up" });
    const [request] = await waitFor(
      async () => {
        const pending = await bridge.pending();
        return pending.length > 0 ? pending : null;
      },
      20_000,
      "the approval request",
    );
    expect(request.tool).toBe("browser");
    expect(JSON.stringify(request)).toContain("https://example.invalid/docs");
    await emitCommand(socket, "approval.decide", {
      commandId: uniqueId(),
      approvalId: request.approval_id,
      decision: "reject",
      feedback: "not that site, use the local docs",
    });
    await turnCompleted(sessionId);
    expect(toolOutputs(1)[0]).toContain("not that site, use the local docs");
  }, 60_000);

  it("gives up on a page that never loads with a clear timeout error", async () => {
    const sessionId = await bridge.createSession();
    fake.reset();
    fake.script(
      { toolCalls: [{ name: "browser", arguments: { action: "navigate", url: `http://127.0.0.1:${silentPort}/` } }] },
      { text: "It hangs." },
    );
    const socket = await bridge.socket();
    await emitCommand(socket, "turn.prompt", { commandId: uniqueId(), sessionId, text: "open it" });
    await turnCompleted(sessionId);
    expect(toolOutputs(1)[0]).toMatch(/did not finish loading within 15s/);
  }, 60_000);

  it("scales a screenshot larger than the model's image limit down", async () => {
    const browsers = bridge.services.browsers!;
    const sessionId = await bridge.createSession();
    await browsers.navigate(sessionId, `http://127.0.0.1:${devPort}/`);
    await (await browsers.page(sessionId)).setViewportSize({ width: 3000, height: 2400 });
    const shot = await browsers.screenshot(sessionId);
    expect(Math.max(shot.width, shot.height)).toBeLessThanOrEqual(MAX_IMAGE_SIDE);
    expect(shot.width).toBe(2048);
    await browsers.closeSession(sessionId);
  }, 60_000);
});
