import { afterEach, beforeEach, describe, expect, it } from "vitest";
import * as z from "zod";
import { WorldlineError } from "../../../server/errors";
import { defineTool, MAX_TOOL_OUTPUT_CHARS } from "../../../server/tools";
import { fakeCtx, makeWorkspace } from "./support";

let ws: Awaited<ReturnType<typeof makeWorkspace>>;
beforeEach(async () => {
  ws = await makeWorkspace();
});
afterEach(async () => ws.cleanup());

const echo = defineTool({
  name: "echo_text",
  description: "Echo text back.",
  parameters: z.object({
    text: z.string().describe("Text to echo."),
    times: z.number().int().min(1).default(1).describe("How many times."),
  }),
  needsApproval: () => ({ level: "none", subject: "x", scope: "x", description: "echo", risk: "none" }),
  execute: async (args) => args.text.repeat(args.times),
});

describe("defineTool", () => {
  it("exposes a JSON schema for the model with descriptions and optional defaults", () => {
    expect(echo.jsonSchema).toMatchObject({
      type: "object",
      properties: { text: { type: "string", description: "Text to echo." }, times: { type: "integer" } },
      required: ["text"],
    });
    expect(echo.jsonSchema).not.toHaveProperty("$schema");
  });

  it("accepts arguments as a JSON string or an object", async () => {
    const ctx = fakeCtx(ws.ws);
    expect(await echo.run('{"text":"ab","times":2}', ctx)).toEqual({ output: "abab", isError: false });
    expect(await echo.run({ text: "c" }, ctx)).toEqual({ output: "c", isError: false });
  });

  it("returns an actionable error result for arguments that are not JSON", async () => {
    const result = await echo.run("{text: oops", fakeCtx(ws.ws));
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(/Invalid arguments for echo_text: the arguments are not valid JSON/);
  });

  it("names each invalid field in the error result", async () => {
    const result = await echo.run({ times: 0 }, fakeCtx(ws.ws));
    expect(result.isError).toBe(true);
    expect(result.output).toContain("- text:");
    expect(result.output).toContain("- times:");
  });

  it("needs no approval for invalid arguments, since run refuses them", async () => {
    expect((await echo.needsApproval("not json", fakeCtx(ws.ws))).level).toBe("none");
  });

  it("asks by default when a tool declares no needsApproval", async () => {
    const tool = defineTool({ name: "t", description: "d", parameters: z.object({}), execute: async () => "ok" });
    expect((await tool.needsApproval({}, fakeCtx(ws.ws))).level).toBe("ask");
  });

  it("asks a human when working out the approval need fails, instead of throwing", async () => {
    const tool = defineTool({
      name: "t",
      description: "d",
      parameters: z.object({}),
      needsApproval: () => {
        throw new Error("disk on fire");
      },
      execute: async () => "ok",
    });
    expect(await tool.needsApproval({}, fakeCtx(ws.ws))).toMatchObject({
      level: "ask",
      description: expect.stringContaining("disk on fire"),
    });
  });

  it("truncates long output with a visible note", async () => {
    const result = await echo.run({ text: "x", times: MAX_TOOL_OUTPUT_CHARS + 123 }, fakeCtx(ws.ws));
    expect(result.output.length).toBeLessThan(MAX_TOOL_OUTPUT_CHARS + 100);
    expect(result.output).toMatch(/\[output truncated: 123 more characters\]$/);
  });

  it("turns thrown errors, including WorldlineError, into error results", async () => {
    const failing = defineTool({
      name: "fail",
      description: "fails",
      parameters: z.object({ kind: z.enum(["plain", "domain"]).describe("which error") }),
      execute: async (args) => {
        if (args.kind === "domain")
          throw new WorldlineError("fs:outside_workspace", "That path is outside the workspace.");
        throw new Error("boom");
      },
    });
    expect(await failing.run({ kind: "plain" }, fakeCtx(ws.ws))).toEqual({ isError: true, output: "Error: boom" });
    expect(await failing.run({ kind: "domain" }, fakeCtx(ws.ws))).toEqual({
      isError: true,
      output: "Error (fs:outside_workspace): That path is outside the workspace.",
    });
  });

  it("returns a cancelled result when the signal aborts, even if the tool ignores it", async () => {
    const slow = defineTool({
      name: "slow",
      description: "never ends",
      parameters: z.object({}),
      execute: () => new Promise<string>(() => undefined),
    });
    const controller = new AbortController();
    const pending = slow.run({}, fakeCtx(ws.ws, { signal: controller.signal }));
    setTimeout(() => controller.abort(), 20);
    expect(await pending).toEqual({ isError: true, output: "Cancelled." });
  });

  it("does not start a tool whose signal is already aborted", async () => {
    let ran = false;
    const tool = defineTool({
      name: "t",
      description: "d",
      parameters: z.object({}),
      execute: async () => ((ran = true), "ok"),
    });
    const controller = new AbortController();
    controller.abort();
    expect((await tool.run({}, fakeCtx(ws.ws, { signal: controller.signal }))).isError).toBe(true);
    expect(ran).toBe(false);
  });

  it("times out a tool that runs past its time limit", async () => {
    const slow = defineTool({
      name: "slow",
      description: "d",
      parameters: z.object({}),
      timeoutMs: 50,
      execute: () => new Promise<string>(() => undefined),
    });
    const result = await slow.run({}, fakeCtx(ws.ws));
    expect(result).toMatchObject({ isError: true });
    expect(result.output).toMatch(/timed out/);
  });
});
