import { promises as fs } from "node:fs";
import path from "node:path";
import type { Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { emitCommand, startTestBridge, type TestBridge } from "../helpers";
import { databaseText, TEST_POSTGRES } from "../../db";
import { waitFor } from "../../support/wait";

/**
 * Fake secrets seeded into the environment and into tool output (a shell command
 * and a file read print them) must not reach the database file (raw bytes of the
 * SQLite file and its WAL), the bridge's logs, any socket frame, or the requests
 * the model provider receives.
 */
const SECRETS = {
  openai: "sk-proj-Zq8v3LmN5pR7tX9wB2dF4hJ6kA1cE0gY",
  anthropic: "sk-ant-api03-Hx7Kq2Lm9Np4Rs6Tv8Wy0Za3Bc5De7Fg",
  github: "ghp_Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8",
  awsKeyId: "AKIAZ7QX3V9PLM2RT4KW",
  awsSecret: "aws_secret_access_key = Tq9Lm3Xv7Rw2Kp8Zn4Yb6Hc1Jd5Gf0Se3Ua7Wi9Q",
  jwt: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ3bC1mYWtlLXVzZXIifQ.Qm7Xp2Vn9Lk4Tr8Zw3Yb6Hc1Jd5Gf0Se3Ua7Wi9",
  pemBody: "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDwlFakeKeyBody",
  urlPassword: "Wl-Url-Pa55word-7x9",
};
/** Environment-only secrets: never printed literally by the test, only by `env`. */
const ENV_SECRETS = {
  WL_FAKE_SERVICE_TOKEN: "wl-env-only-token-5f8a2c9d1e",
  WL_FAKE_DB_PASSWORD: "wl-env-only-pass-7b3e6a0f4c",
  GITHUB_TOKEN: SECRETS.github,
};
/** What must never be found: the distinctive part of each secret. */
const NEEDLES = [
  SECRETS.openai,
  SECRETS.anthropic,
  SECRETS.github,
  SECRETS.awsKeyId,
  "Tq9Lm3Xv7Rw2Kp8Zn4Yb6Hc1Jd5Gf0Se3Ua7Wi9Q",
  "Qm7Xp2Vn9Lk4Tr8Zw3Yb6Hc1Jd5Gf0Se3Ua7Wi9",
  SECRETS.pemBody,
  SECRETS.urlPassword,
  ENV_SECRETS.WL_FAKE_SERVICE_TOKEN,
  ENV_SECRETS.WL_FAKE_DB_PASSWORD,
];

const SECRET_FILE = [
  `OPENAI=${SECRETS.openai}`,
  `anthropic key: ${SECRETS.anthropic}`,
  `gh ${SECRETS.github}`,
  `aws ${SECRETS.awsKeyId}`,
  SECRETS.awsSecret,
  `session ${SECRETS.jwt}`,
  "-----BEGIN PRIVATE KEY-----",
  SECRETS.pemBody,
  "AAAAB3NzaC1yc2EAAAADAQABAAABAQC7",
  "-----END PRIVATE KEY-----",
  `db postgres://admin:${SECRETS.urlPassword}@db.internal:5432/app`,
  "",
].join("\n");

let fake: FakeLlm;
let bridge: TestBridge;
let socket: Socket;
const logs: string[] = [];
const frames: string[] = [];

beforeAll(async () => {
  for (const [name, value] of Object.entries(ENV_SECRETS)) process.env[name] = value;
  vi.spyOn(process.stderr, "write").mockImplementation(
    (chunk: string | Uint8Array) => (logs.push(String(chunk)), true),
  );
  vi.spyOn(process.stdout, "write").mockImplementation(
    (chunk: string | Uint8Array) => (logs.push(String(chunk)), true),
  );
  for (const method of ["log", "error", "warn", "info", "debug"] as const) {
    vi.spyOn(console, method).mockImplementation(
      (...args: unknown[]) =>
        void logs.push(args.map((a) => (a instanceof Error ? `${a.message}\n${a.stack}` : String(a))).join(" ")),
    );
  }
  fake = await startFakeLlm();
  bridge = await startTestBridge({ llmUrl: fake.url });
  socket = await bridge.socket();
  socket.onAny((event: string, ...args: unknown[]) => frames.push(`${event} ${JSON.stringify(args)}`));
  await fs.writeFile(path.join(bridge.workspace, "notes.txt"), SECRET_FILE);
});

afterAll(async () => {
  await bridge.stop();
  await fake.close();
  vi.restoreAllMocks();
  for (const name of Object.keys(ENV_SECRETS)) delete process.env[name];
});

async function runTurn(sessionId: string, text: string): Promise<void> {
  const before = await completedTurns(sessionId);
  await emitCommand(socket, "turn.prompt", {
    commandId: `cmd-${Date.now()}-${Math.random().toString(36).slice(2)}`,
    sessionId,
    text,
  });
  await waitFor(async () => (await completedTurns(sessionId)) > before, 30_000, "the turn to complete");
}

async function completedTurns(sessionId: string): Promise<number> {
  const events = (await (await bridge.api(`/api/v1/sessions/${sessionId}/events`)).json()) as { type: string }[];
  return events.filter((event) => event.type === "turn.completed").length;
}

describe("secrets", () => {
  it("are found nowhere after tools print them", async () => {
    const created = await bridge.api("/api/v1/sessions", { body: { workspace: bridge.workspace, yolo: true } });
    const { id: sessionId } = (await created.json()) as { id: string };
    await emitCommand(socket, "session.subscribe", { sessionId, afterSeq: 0 });

    fake.script(
      { toolCalls: [{ name: "shell", arguments: { command: "cat notes.txt; env | sort" } }] },
      { toolCalls: [{ name: "read_file", arguments: { path: "notes.txt" } }] },
      {
        toolCalls: [
          {
            name: "shell",
            arguments: { command: "for i in 1 2 3; do cat notes.txt; sleep 0.05; done", background: true },
          },
        ],
      },
      { toolCalls: [{ name: "grep", arguments: { pattern: "sk-|ghp_|AKIA", path: "." } }] },
      { text: "I looked at the notes." },
    );
    await runTurn(sessionId, "Look at notes.txt and the environment.");
    fake.script(
      { toolCalls: [{ name: "shell", arguments: { command: "cat does-not-exist-${WL_FAKE_SERVICE_TOKEN}" } }] },
      { text: "ok" },
    );
    await runTurn(sessionId, "Try a failing command.");
    await bridge.services.log.flush();

    // The tools really ran and printed the file (redacted), so the check below is not vacuous.
    const events = (await (await bridge.api(`/api/v1/sessions/${sessionId}/events`)).json()) as {
      type: string;
      payload: unknown;
    }[];
    const eventText = JSON.stringify(events);
    expect(eventText).toContain("[REDACTED");
    expect(eventText).toContain("db.internal");
    expect(fake.requests.length).toBeGreaterThanOrEqual(5);

    const places: Record<string, string> = {
      "database file": await readDbBytes(bridge.home),
      "bridge logs": logs.join("\n"),
      "socket frames": frames.join("\n"),
      "model requests": JSON.stringify(fake.requests.map((request) => request.body)),
      "events API": eventText,
      "audit API": await (await bridge.api("/api/v1/audit/commands")).text(),
    };
    const found: string[] = [];
    for (const [place, text] of Object.entries(places)) {
      for (const needle of NEEDLES) if (text.includes(needle)) found.push(`${place}: ${needle}`);
    }
    expect(frames.length).toBeGreaterThan(5);
    expect(found).toEqual([]);
  });
});

/** What the database keeps as text: the SQLite file's raw bytes (WAL too), or every PostgreSQL row. */
async function readDbBytes(home: string): Promise<string> {
  const text = await databaseText(home);
  expect(text.length).toBeGreaterThan(TEST_POSTGRES ? 1_000 : 10_000);
  return text;
}
