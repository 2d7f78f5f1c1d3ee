import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { plainText } from "../../support/model-text";
import { RESUME_PROMPT } from "../../../components/session/resume";
import { applyEvents, emptyTranscript, MAX_PROMPT_IMAGES, type EventEnvelope } from "../../../server/protocol";
import { EventLog } from "../../../server/sessions";
import * as store from "../../../server/store";
import { startFakeLlm } from "../../fake-llm/server";
import type { FakeLlm } from "../../fake-llm/types";
import { emitCommand, startTestBridge, uniqueId, waitFor, type TestBridge } from "../helpers";
import { testDatabaseUrl } from "../../db";

/** A real 1×1 PNG and a real 1×1 GIF. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const GIF = "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7";
const PREVIEW = `data:image/png;base64,${PNG}`;

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake.close();
});

async function events(bridge: TestBridge, sessionId: string): Promise<EventEnvelope[]> {
  return (await (await bridge.api(`/api/v1/sessions/${sessionId}/events`)).json()) as EventEnvelope[];
}

async function completedTurns(bridge: TestBridge, sessionId: string, count: number): Promise<EventEnvelope[]> {
  return waitFor(
    async () => {
      const all = await events(bridge, sessionId);
      return all.filter((event) => event.type === "turn.completed").length >= count ? all : null;
    },
    20_000,
    `${count} turn.completed`,
  );
}

describe("prompt images", () => {
  let bridge: TestBridge;
  beforeAll(async () => {
    bridge = await startTestBridge({ llmUrl: fake.url });
  });
  afterAll(async () => {
    await bridge.stop();
  });

  it("reach the model as content parts, stay in the history, and the log keeps only a reference with the preview", async () => {
    fake.reset();
    const { id: sessionId } = (await (
      await bridge.api("/api/v1/sessions", { body: { workspace: bridge.workspace } })
    ).json()) as { id: string };
    const socket = await bridge.socket();
    fake.script({ text: "A red pixel." }, { text: "Still a red pixel." });
    await emitCommand(socket, "turn.prompt", {
      commandId: uniqueId(),
      sessionId,
      text: "What is in these?",
      images: [
        { mediaType: "image/png", dataBase64: PNG, preview: PREVIEW },
        { mediaType: "image/gif", dataBase64: GIF },
      ],
    });
    await completedTurns(bridge, sessionId, 1);
    // The prompt is one text part (checkpoint markers and the turn's <context> join its text) and the images.
    const user = fake.requests[0].body.messages.find(
      (message: { role: string; content: unknown }) => message.role === "user" && Array.isArray(message.content),
    );
    expect(plainText(user.content[0].text)).toBe("What is in these?");
    expect(user.content).toEqual([
      { type: "text", text: expect.any(String) },
      { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
      { type: "image_url", image_url: { url: `data:image/gif;base64,${GIF}` } },
    ]);

    const log = await events(bridge, sessionId);
    const message = log.find((event) => event.type === "message.user")!;
    expect(message.payload).toMatchObject({
      text: "What is in these?",
      images: [
        { mediaType: "image/png", bytes: 70, preview: PREVIEW },
        { mediaType: "image/gif", bytes: 42 },
      ],
    });
    // The GIF had no preview: its data is nowhere in the event log.
    expect(JSON.stringify(log)).not.toContain(GIF);
    const state = applyEvents(emptyTranscript(), log);
    expect(state.items.find((item) => item.kind === "user")).toMatchObject({
      images: [{ preview: PREVIEW }, { mediaType: "image/gif" }],
    });

    // The next turn's request still carries the images (they are in the history).
    await emitCommand(socket, "turn.prompt", { commandId: uniqueId(), sessionId, text: "And now?" });
    await completedTurns(bridge, sessionId, 2);
    const again = fake.requests[1].body.messages.filter((message: { role: string }) => message.role === "user");
    expect(JSON.stringify(again)).toContain(`data:image/gif;base64,${GIF}`);
  });

  it("are refused when mislabelled, too many, too large, or of another type", async () => {
    const { id: sessionId } = (await (
      await bridge.api("/api/v1/sessions", { body: { workspace: bridge.workspace } })
    ).json()) as { id: string };
    const socket = await bridge.socket();
    const send = (images: unknown) =>
      emitCommand(socket, "turn.prompt", { commandId: uniqueId(), sessionId, text: "look", images });
    await expect(send([{ mediaType: "image/jpeg", dataBase64: PNG }])).rejects.toMatchObject({
      code: expect.stringContaining("invalid"),
    });
    await expect(send([{ mediaType: "image/bmp", dataBase64: PNG }])).rejects.toMatchObject({
      code: expect.stringContaining("invalid"),
    });
    await expect(
      send(Array.from({ length: MAX_PROMPT_IMAGES + 1 }, () => ({ mediaType: "image/png", dataBase64: PNG }))),
    ).rejects.toMatchObject({
      code: expect.stringContaining("invalid"),
    });
    const big = PNG.slice(0, 24) + "A".repeat(3 * 1024 * 1024);
    await expect(send([{ mediaType: "image/png", dataBase64: big }])).rejects.toMatchObject({
      code: expect.stringContaining("invalid"),
    });
    await expect(
      send([{ mediaType: "image/png", dataBase64: PNG, preview: "javascript:alert(1)" }]),
    ).rejects.toMatchObject({ code: expect.stringContaining("invalid") });
    expect((await events(bridge, sessionId)).filter((event) => event.type === "turn.started")).toEqual([]);
  });
});

it("a turn interrupted by a restart while it waited on an approval is offered for resuming, and resuming continues it", async () => {
  // What a crashed bridge leaves behind: a running turn whose prompt is in the history, waiting on a pending request.
  const home = await fs.mkdtemp(path.join(os.tmpdir(), "wl-ide-resume-"));
  const workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-ide-resume-ws-")));
  const { db } = await store.openDb(home, testDatabaseUrl(home));
  const session = await store.createSession(db, { workspace });
  const turn = await store.createTurn(db, session.id, "create notes.txt");
  await store.appendHistory(db, session.id, [
    {
      position: 0,
      kind: "message",
      data: JSON.stringify({ kind: "message", message: { role: "user", content: "create notes.txt" } }),
    },
  ]);
  const approval = await store.createApproval(db, {
    sessionId: session.id,
    turnId: turn.id,
    toolCallId: "call_1",
    tool: "shell",
    args: JSON.stringify({ command: "touch notes.txt" }),
    description: "Run: touch notes.txt",
    riskLevel: "medium",
  });
  const log = new EventLog(db);
  await log.open(session.id);
  log.append(
    session.id,
    { type: "turn.started", payload: { turnId: turn.id, number: turn.number, prompt: "create notes.txt" } },
    turn.id,
  );
  log.append(
    session.id,
    { type: "message.user", payload: { turnId: turn.id, messageId: "msg_1", text: "create notes.txt" } },
    turn.id,
  );
  log.append(
    session.id,
    {
      type: "approval.requested",
      payload: {
        turnId: turn.id,
        approvalId: approval.id,
        toolCallId: "call_1",
        tool: "shell",
        args: { command: "touch notes.txt" },
        description: "Run: touch notes.txt",
        riskLevel: "medium",
        kind: "tool",
      },
    },
    turn.id,
  );
  await log.close();
  await db.$disconnect();

  fake.reset();
  const bridge = await startTestBridge({ llmUrl: fake.url, home });
  try {
    const after = applyEvents(emptyTranscript(), await events(bridge, session.id));
    expect(after.running).toBeNull();
    expect(after.items.at(-1)).toMatchObject({ kind: "interrupted", turnId: turn.id, resumable: true });

    fake.script({ text: "Resuming: done." });
    const socket = await bridge.socket();
    await emitCommand(socket, "turn.prompt", { commandId: uniqueId(), sessionId: session.id, text: RESUME_PROMPT });
    const all = await completedTurns(bridge, session.id, 2);
    const resumed = applyEvents(emptyTranscript(), all);
    expect(resumed.items.find((item) => item.kind === "interrupted")).toMatchObject({ resumable: false });
    // The model sees the original prompt once, then the continue message.
    // (Two user messages in a row, the interrupted prompt and this one, are merged into one for the model.)
    const users = fake.requests[0].body.messages
      .filter((message: { role: string }) => message.role === "user")
      .map((message: { content: string }) => message.content)
      .join("\n\n");
    expect(users.split("create notes.txt")).toHaveLength(2);
    expect(users).toContain(RESUME_PROMPT);
  } finally {
    await bridge.stop();
  }
});
