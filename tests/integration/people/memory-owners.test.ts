import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm } from "../../fake-llm/server";
import type { FakeLlm } from "../../fake-llm/types";
import { startTestBridge, type TestBridge } from "../helpers";

/**
 * Memories belong to a person (SECURITY.md, "Memories belong to a person"): what one person's
 * turn remembers is never listed to, nor recalled into the model requests of, another person.
 */
const PIN = "My vault PIN is 9137.";

let fake: FakeLlm;
let hub: TestBridge;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  fake = await startFakeLlm();
  hub = await startTestBridge({ llmUrl: fake.url });
  // Only the remember tool stores here: the post-turn decision would take scripted answers of its own.
  expect((await hub.api("/api/v1/memory/settings", { method: "PATCH", body: { auto_memory: false } })).status).toBe(
    200,
  );
  for (const name of ["ann", "ben"]) {
    await hub.services.people.addUser({ name, role: "member", password: `${name}-password-1` });
    const user = (await hub.services.people.listUsers()).find((candidate) => candidate.name === name)!;
    tokens[name] = (await hub.services.people.createApiToken(user.id, { name: "t" })).token;
  }
});
afterAll(async () => {
  await hub?.stop();
  await fake?.close();
});

async function as<T>(name: string, pathname: string, body?: unknown): Promise<T> {
  const response = await fetch(`${hub.url}${pathname}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${tokens[name]}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${pathname}: ${response.status} ${await response.text()}`);
  return (pathname.includes("/chat/stream") ? await response.text() : await response.json()) as T;
}

async function turn(name: string, message: string): Promise<string> {
  const { id } = await as<{ id: string }>(name, "/api/v1/sessions", { workspace: hub.workspace });
  await as(name, "/api/v1/chat/stream", { message, session_id: id });
  return JSON.stringify(fake.requests.at(-1)!.body.messages);
}

describe("memories on a hub", () => {
  it("one person's remembered fact is neither listed to nor recalled for another person", async () => {
    fake.script(
      { toolCalls: [{ name: "remember", arguments: { text: PIN, type: "fact", scope: "global", importance: 5 } }] },
      { text: "Remembered." },
    );
    await turn("ann", "Remember my vault PIN: 9137");
    const texts = async (name: string) => (await as<{ text: string }[]>(name, "/api/v1/memory")).map((m) => m.text);
    expect(await texts("ann")).toContain(PIN);
    expect(await texts("ben")).not.toContain(PIN);

    fake.script({ text: "I don't know." });
    expect(await turn("ben", "What is my vault PIN?")).not.toContain("9137");
    fake.script({ text: "9137" });
    expect(await turn("ann", "What is my vault PIN?")).toContain(PIN);
    // The launch token (the hub's operator) still sees every memory.
    const all = (await (await hub.api("/api/v1/memory")).json()) as { text: string }[];
    expect(all.map((memory) => memory.text)).toContain(PIN);
  });
});
