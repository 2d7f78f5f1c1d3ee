import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { createApiRouter } from "../../../server/transport/http";
import { eventNames, startApiBridge, systemPromptOf, toolNamesOf, turnMessageOf, type ApiBridge } from "./support";

let fake: FakeLlm;
let bridge: ApiBridge;

interface Memory {
  id: string;
  text: string;
  type: string;
  scope: string;
  source: string;
  workspace: string | null;
  importance: number;
}

beforeAll(async () => {
  fake = await startFakeLlm();
  bridge = await startApiBridge(fake);
});
afterAll(async () => {
  await bridge.stop();
  await fake.close();
});
afterEach(async () => {
  fake.reset();
  for (const memory of await bridge.json<Memory[]>("/api/v1/memory"))
    await bridge.api(`/api/v1/memory/${memory.id}`, { method: "DELETE" });
  await bridge.json("/api/v1/memory/settings", { method: "PATCH", body: { reflection: false, auto_memory: true } });
});

describe("memory", () => {
  it("GET|POST|DELETE /api/v1/memory: stores, filters, ranks by q and deletes", async () => {
    const fact = await bridge.json<Memory>("/api/v1/memory", {
      body: {
        text: "The CI runs on Buildkite.",
        type: "fact",
        scope: "workspace",
        workspace: bridge.workspace,
        importance: 4,
      },
    });
    expect(fact).toMatchObject({
      type: "fact",
      scope: "workspace",
      workspace: bridge.workspace,
      importance: 4,
      source: "user",
    });
    await bridge.json("/api/v1/memory", { body: { text: "The user likes short answers.", type: "preference" } });
    expect((await bridge.json<Memory[]>("/api/v1/memory")).map((m) => m.text)).toEqual([
      "The user likes short answers.",
      "The CI runs on Buildkite.",
    ]);
    expect((await bridge.json<Memory[]>("/api/v1/memory?type=fact")).map((m) => m.id)).toEqual([fact.id]);
    expect(
      (
        await bridge.json<Memory[]>(`/api/v1/memory?scope=workspace&workspace=${encodeURIComponent(bridge.workspace)}`)
      ).map((m) => m.id),
    ).toEqual([fact.id]);
    expect((await bridge.json<Memory[]>("/api/v1/memory?q=which%20CI%20do%20we%20use"))[0].id).toBe(fact.id);
    expect((await bridge.api("/api/v1/memory", { body: { text: "x", scope: "workspace" } })).status).toBe(400);
    expect((await bridge.api("/api/v1/memory", { body: { text: "ok text", type: "gossip" } })).status).toBe(400);
    expect(await bridge.json(`/api/v1/memory?id=${fact.id}`, { method: "DELETE" })).toEqual({
      deleted: true,
      id: fact.id,
    });
    expect((await bridge.api(`/api/v1/memory/${fact.id}`, { method: "DELETE" })).status).toBe(404);
  });

  it("a fact stored after one turn reaches the context of a later session, whose direct question skips tools", async () => {
    const first = await bridge.createSession();
    fake.script(
      { text: "Noted." },
      // The memory decision: a cheap call without tools.
      {
        text: '{"store": true, "text": "The staging database is called orca-db.", "type": "fact", "scope": "global", "importance": 4, "reason": "durable project fact"}',
      },
    );
    const events = await bridge.chat({
      message: "Remember that the staging database is called orca-db.",
      session_id: first,
    });
    const names = eventNames(events);
    expect(names.indexOf("memory_policy_decision")).toBeGreaterThan(names.lastIndexOf("content_delta"));
    expect(names.indexOf("memory_stored")).toBeGreaterThan(names.indexOf("memory_policy_decision"));
    expect(names.indexOf("memory_stored")).toBeLessThan(names.indexOf("done"));
    expect(events.find((event) => event.event === "memory_policy_decision")!.data).toMatchObject({
      decision: "store",
      via: "model",
    });
    expect(events.find((event) => event.event === "memory_stored")!.data).toMatchObject({
      text: "The staging database is called orca-db.",
      type: "fact",
      scope: "global",
      source: "policy",
    });
    const decisionRequest = fake.requests[1].body;
    expect(decisionRequest.tools).toBeUndefined();
    expect(JSON.stringify(decisionRequest.messages)).toContain("orca-db");

    const memories = await bridge.json<Memory[]>("/api/v1/memory");
    expect(memories).toHaveLength(1);

    // A later session, in another workspace: the global fact is recalled.
    const second = await bridge.createSession({ workspace: await bridge.newWorkspace() });
    fake.script({ text: "It is called orca-db." });
    const answer = await bridge.chat({ message: "What is the staging database called?", session_id: second });
    const request = fake.requests.at(-1)!;
    // Recalled memories travel with the turn's message; the system prompt stays the session's fixed one.
    expect(turnMessageOf(request)).toContain("The staging database is called orca-db.");
    expect(systemPromptOf(request)).not.toContain("orca-db");
    // The tools stay in the request (its cached prefix), the model is told not to use them.
    expect(request.body.tool_choice).toBe("none");
    expect(eventNames(answer)).not.toContain("memory_policy_decision");
    expect(fake.requests).toHaveLength(3);

    // A request to act still gets its tools, and the memory still comes along.
    fake.script({ text: "ok" });
    await bridge.chat({ message: "Update the staging database config for the new orca-db host", session_id: second });
    expect(toolNamesOf(fake.requests.at(-1)!)).toEqual(expect.arrayContaining(["read_file", "remember"]));
    expect(fake.requests.at(-1)!.body.tool_choice).toBeUndefined();
    // Told once in this session already: not repeated, still in the conversation.
    expect(turnMessageOf(fake.requests.at(-1)!)).not.toContain("orca-db.");
    expect(JSON.stringify(fake.requests.at(-1)!.body.messages)).toContain("The staging database is called orca-db.");
  });

  it("falls back to the rule's candidate when the deciding model's reply is unusable", async () => {
    const sessionId = await bridge.createSession();
    fake.script({ text: "Sure." }, { text: "I cannot answer in JSON, sorry" });
    const events = await bridge.chat({
      message: "From now on, use pnpm instead of npm in this project.",
      session_id: sessionId,
    });
    expect(events.find((event) => event.event === "memory_policy_decision")!.data).toMatchObject({
      decision: "store",
      via: "rules",
    });
    const [memory] = await bridge.json<Memory[]>("/api/v1/memory");
    expect(memory).toMatchObject({
      type: "preference",
      scope: "workspace",
      workspace: bridge.workspace,
      source: "policy",
    });
    expect(memory.text).toContain("pnpm");
  });

  it("a turn with nothing memorable makes no decision call and records nothing", async () => {
    const sessionId = await bridge.createSession();
    fake.script({ text: "Hello!" });
    const events = await bridge.chat({ message: "hello there", session_id: sessionId });
    expect(eventNames(events)).not.toContain("memory_policy_decision");
    expect(fake.requests).toHaveLength(1);
  });

  it("the remember tool stores a memory the agent chose, as an event of the task", async () => {
    const sessionId = await bridge.createSession();
    fake.script(
      {
        toolCalls: [
          {
            name: "remember",
            arguments: { text: "Tests run with `npm run check`.", type: "fact", scope: "workspace", importance: 4 },
          },
        ],
      },
      { text: "Remembered." },
    );
    const events = await bridge.chat({ message: "Figure out how tests run here", session_id: sessionId });
    expect(events.find((event) => event.event === "memory_stored")!.data).toMatchObject({
      source: "agent",
      scope: "workspace",
    });
    const [memory] = await bridge.json<Memory[]>("/api/v1/memory");
    expect(memory).toMatchObject({
      text: "Tests run with `npm run check`.",
      source: "agent",
      workspace: bridge.workspace,
    });
  });

  it("the auto memory decision can be turned off", async () => {
    await bridge.json("/api/v1/memory/settings", { method: "PATCH", body: { auto_memory: false } });
    const sessionId = await bridge.createSession();
    fake.script({ text: "ok" });
    const events = await bridge.chat({ message: "Remember that I use vim.", session_id: sessionId });
    expect(eventNames(events)).not.toContain("memory_policy_decision");
    expect(await bridge.json<Memory[]>("/api/v1/memory")).toEqual([]);
  });
});

describe("reflection", () => {
  it("is off by default; when on, a critic call after a completed task stores a lesson", async () => {
    expect(await bridge.json("/api/v1/memory/settings")).toEqual({ auto_memory: true, reflection: false });
    const sessionId = await bridge.createSession();
    fake.script({ text: "done" });
    expect(eventNames(await bridge.chat({ message: "tidy up", session_id: sessionId }))).not.toContain(
      "reflection_completed",
    );

    await bridge.json("/api/v1/memory/settings", { method: "PATCH", body: { reflection: true } });
    fake.reset();
    fake.script(
      { text: "Tidied." },
      { text: '```json\n{"lesson": "Run the formatter before committing in this repo.", "importance": 4}\n```' },
    );
    const events = await bridge.chat({ message: "tidy up again", session_id: sessionId });
    const reflection = events.find((event) => event.event === "reflection_completed")!.data;
    expect(reflection).toMatchObject({
      outcome: "stored",
      lesson: "Run the formatter before committing in this repo.",
    });
    expect(eventNames(events).indexOf("reflection_completed")).toBeLessThan(eventNames(events).indexOf("done"));
    expect(JSON.stringify(fake.requests[1].body.messages)).toContain("tidy up again");
    const lessons = await bridge.json<Memory[]>("/api/v1/memory?type=lesson");
    expect(lessons).toEqual([
      expect.objectContaining({ id: reflection.memory_id, source: "reflection", scope: "workspace", importance: 4 }),
    ]);

    // The lesson is recalled in the workspace's next task.
    fake.reset();
    fake.script({ text: "ok" }, { text: '{"lesson": null}' });
    const next = await bridge.chat({
      message: "commit the formatter changes",
      session_id: await bridge.createSession(),
    });
    expect(turnMessageOf(fake.requests[0])).toContain("Run the formatter before committing");
    expect(next.find((event) => event.event === "reflection_completed")!.data).toMatchObject({ outcome: "skipped" });
  });
});

describe("skills", () => {
  it("lists SKILL.md folders of the workspace and the home, offers their summaries to the model and loads one on /skill:<name>", async () => {
    const workspace = await bridge.newWorkspace();
    const skill = path.join(workspace, ".worldline", "skills", "deploy");
    await fs.mkdir(skill, { recursive: true });
    await fs.writeFile(
      path.join(skill, "SKILL.md"),
      "---\nname: deploy\ndescription: Deploy the app to staging with the release script.\n---\n\n# Deploy\n\nRun ./scripts/release.sh --staging and watch the health check.\n",
    );
    const claude = path.join(workspace, ".claude", "skills", "review");
    await fs.mkdir(claude, { recursive: true });
    await fs.writeFile(
      path.join(claude, "SKILL.md"),
      "---\nname: review\ndescription: >\n  Review a diff\n  for bugs.\n---\nBody.\n",
    );
    const home = path.join(bridge.home, "skills", "notes");
    await fs.mkdir(home, { recursive: true });
    await fs.writeFile(path.join(home, "SKILL.md"), "# Notes\n\nKeep notes in NOTES.md.\n");

    const listed = await bridge.json<{ name: string; description: string; source: string }[]>(
      `/api/v1/skills?workspace=${encodeURIComponent(workspace)}`,
    );
    expect(listed).toEqual([
      expect.objectContaining({
        name: "deploy",
        description: "Deploy the app to staging with the release script.",
        source: "workspace",
      }),
      expect.objectContaining({ name: "review", description: "Review a diff for bugs.", source: "workspace" }),
      expect.objectContaining({ name: "notes", description: "Notes", source: "home" }),
    ]);
    expect((await bridge.json<unknown[]>("/api/v1/skills")).length).toBe(1);

    const sessionId = await bridge.createSession({ workspace });
    fake.script({ toolCalls: [{ name: "skill", arguments: { name: "deploy" } }] }, { text: "Deployed." });
    const events = await bridge.chat({ message: "ship it to staging", session_id: sessionId });
    const system = systemPromptOf(fake.requests[0]);
    expect(system).toContain("- deploy: Deploy the app to staging with the release script.");
    expect(system).toContain("- notes: Notes");
    expect(system).not.toContain("release.sh");
    expect(toolNamesOf(fake.requests[0])).toContain("skill");
    expect(String(events.find((event) => event.event === "tool_call_finished")!.data.output)).toContain(
      "./scripts/release.sh --staging",
    );

    fake.reset();
    fake.script({ text: "ok" });
    await bridge.chat({ message: "/skill:deploy now please", session_id: sessionId });
    // An invoked skill's text comes with the turn's message; the system prompt does not change.
    expect(turnMessageOf(fake.requests[0])).toContain("Run ./scripts/release.sh --staging and watch the health check.");
    expect(systemPromptOf(fake.requests[0])).toBe(system);
  });
});

describe("GET /api/v1/openapi.json", () => {
  it("describes every route of the router, with request schemas from the zod validators", async () => {
    const doc = await bridge.json<{
      openapi: string;
      paths: Record<
        string,
        Record<
          string,
          {
            requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> };
            parameters: { name: string; in: string }[];
            summary: string;
          }
        >
      >;
    }>("/api/v1/openapi.json");
    expect(doc.openapi).toBe("3.1.0");
    const routes = createApiRouter().list();
    expect(routes.length).toBeGreaterThan(40);
    for (const route of routes) {
      const operation = doc.paths[route.path.replace(/:([a-zA-Z_]+)/g, "{$1}")]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${route.path}`).toBeDefined();
      expect(operation.summary, `${route.method} ${route.path}`).not.toBe(`${route.method} ${route.path}`);
    }
    const chat = doc.paths["/api/v1/chat/stream"].post;
    expect(Object.keys(chat.requestBody!.content["application/json"].schema.properties!)).toEqual(
      expect.arrayContaining(["message", "session_id", "workspace", "reasoning"]),
    );
    expect(doc.paths["/api/v1/tasks/{task_id}/events"].get.parameters).toEqual([
      expect.objectContaining({ name: "task_id", in: "path" }),
    ]);
    expect(doc.paths["/api/v1/memory"].get.parameters.map((p) => p.name)).toEqual(
      expect.arrayContaining(["scope", "q", "workspace"]),
    );
  });
});
