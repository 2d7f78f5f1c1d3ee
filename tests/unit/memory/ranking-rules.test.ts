import { describe, expect, it } from "vitest";
import { contentWords, decideMemory, isDirectQuestion, rankMemories, ruleCandidate } from "../../../server/memory";

const at = (days: number) => new Date(Date.now() - days * 86_400_000);

describe("rankMemories", () => {
  const memories = [
    { text: "The user prefers tabs over spaces.", importance: 3, createdAt: at(1) },
    { text: "The staging database is called orca-db.", importance: 3, createdAt: at(10) },
    { text: "Deploys go through the release script.", importance: 5, createdAt: at(0) },
  ];

  it("ranks by shared content words and leaves out memories sharing none", () => {
    const ranked = rankMemories("what is the staging database called?", memories);
    expect(ranked.map((r) => r.item.text)).toEqual(["The staging database is called orca-db."]);
    expect(ranked[0].coverage).toBe(1);
  });

  it("matches plurals and breaks ties by importance", () => {
    const ranked = rankMemories("deploy scripts", [
      ...memories,
      { text: "A deploy checklist exists.", importance: 1, createdAt: at(0) },
    ]);
    expect(ranked[0].item.text).toBe("Deploys go through the release script.");
  });

  it("has nothing to say about a query of stopwords only", () => {
    expect(rankMemories("what is it?", memories)).toEqual([]);
    expect(contentWords("What is it, and how?")).toEqual([]);
  });
});

describe("isDirectQuestion", () => {
  it("accepts plain questions and refuses requests to act", () => {
    expect(isDirectQuestion("What is the staging database called?")).toBe(true);
    expect(isDirectQuestion("which editor do I use")).toBe(true);
    expect(isDirectQuestion("Can you fix the failing test?")).toBe(false);
    expect(isDirectQuestion("Rename the database")).toBe(false);
    expect(isDirectQuestion("/compact what?")).toBe(false);
  });
});

describe("memory rules", () => {
  it("keeps what the user asks to remember, stated preferences and facts about them", () => {
    expect(ruleCandidate("Please remember that the API lives in services/api.")).toMatchObject({
      text: "The API lives in services/api.",
      type: "fact",
    });
    expect(ruleCandidate("From now on, answer in French.")).toMatchObject({ type: "preference", scope: "global" });
    expect(ruleCandidate("In this project we use pnpm.")).toMatchObject({ type: "preference", scope: "workspace" });
    expect(ruleCandidate("My name is Ada.")).toMatchObject({ type: "fact", text: "My name is Ada." });
  });

  it("ignores ordinary requests, slash commands and anything that looks like a secret", () => {
    expect(ruleCandidate("Fix the failing test in src/app.ts")).toBeNull();
    expect(ruleCandidate("/compact remember that this matters")).toBeNull();
    expect(ruleCandidate("Remember that my password is hunter2")).toBeNull();
    expect(ruleCandidate("remember: token sk-abcdefghijklmnop")).toBeNull();
  });
});

describe("decideMemory", () => {
  it("makes no decision (and no model call) when no rule matches", async () => {
    let calls = 0;
    expect(await decideMemory({ prompt: "hello", answer: "hi", complete: async () => (calls++, "{}") })).toBeNull();
    expect(calls).toBe(0);
  });

  it("uses the rules alone without a model", async () => {
    expect(await decideMemory({ prompt: "Remember that CI is Buildkite.", answer: "ok" })).toMatchObject({
      via: "rules",
      candidate: { text: "CI is Buildkite." },
    });
  });

  it("lets the model rewrite or refuse the candidate, and falls back to the rule when its reply is unusable or it fails", async () => {
    const rewrite = await decideMemory({
      prompt: "Remember that ci is buildkite",
      answer: "ok",
      complete: async () =>
        'Sure: {"store": true, "text": "CI runs on Buildkite.", "type": "fact", "scope": "workspace", "importance": 5}',
    });
    expect(rewrite).toMatchObject({
      via: "model",
      candidate: { text: "CI runs on Buildkite.", scope: "workspace", importance: 5 },
    });
    const refuse = await decideMemory({
      prompt: "Remember that it's sunny",
      answer: "ok",
      complete: async () => '{"store": false, "reason": "transient"}',
    });
    expect(refuse).toEqual({ via: "model", reason: "transient" });
    const garbage = await decideMemory({
      prompt: "Remember that CI is Buildkite.",
      answer: "ok",
      complete: async () => "no",
    });
    expect(garbage?.via).toBe("rules");
    const failing = await decideMemory({
      prompt: "Remember that CI is Buildkite.",
      answer: "ok",
      complete: () => Promise.reject(new Error("429")),
    });
    expect(failing?.candidate?.text).toBe("CI is Buildkite.");
  });
});
