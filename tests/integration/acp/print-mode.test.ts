import { spawn } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { CLI, cliEnv, tempDirs } from "./support";

let fake: FakeLlm;
let home: string;
let workspace: string;

beforeAll(async () => {
  fake = await startFakeLlm();
  ({ home, workspace } = await tempDirs());
});
afterAll(() => fake?.close());
beforeEach(() => fake.reset());

function run(
  args: string[],
  options: { stdin?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, "run", ...args], { cwd: workspace, env: cliEnv(home, fake.url) });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? "");
  });
}

describe("worldline run (print mode)", () => {
  it("prints the answer and exits 0", async () => {
    fake.script({ text: "Hello from the fake model." });
    const result = await run(["-p", "say hello"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("Hello from the fake model.\n");
  });

  it("reads the prompt from stdin when -p is missing", async () => {
    fake.script({ text: "Got it." });
    const result = await run([], { stdin: "from stdin\n" });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("Got it.\n");
    expect(JSON.stringify(fake.requests[0].body.messages)).toContain("from stdin");
  });

  it("writes JSON lines of messages and tool results with --output-format stream-json", async () => {
    await fs.writeFile(path.join(workspace, "a.txt"), "alpha\n");
    fake.script(
      { text: "Reading.", toolCalls: [{ name: "read_file", arguments: { path: "a.txt" } }] },
      { text: "It says alpha." },
    );
    const result = await run(["-p", "read a.txt", "--output-format", "stream-json", "--cwd", workspace]);
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({
      role: "assistant",
      content: "Reading.",
      tool_calls: [{ type: "function", function: { name: "read_file" } }],
    });
    expect(lines[1]).toMatchObject({ role: "tool", tool_call_id: lines[0].tool_calls[0].id });
    expect(lines[2]).toEqual({ role: "assistant", content: "It says alpha." });
    expect(lines[3]).toMatchObject({ type: "result", outcome: "completed" });
  });

  it("prints only the last assistant message with --final-message-only", async () => {
    fake.script({ text: "Let me look.", toolCalls: [{ name: "list_dir", arguments: {} }] }, { text: "Final answer." });
    const result = await run(["-p", "list", "--final-message-only"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("Final answer.\n");
  });

  it("exits 75 when the provider keeps answering 429, with the error on stderr", async () => {
    fake.onRequest = () => ({ status: 429, headers: { "retry-after": "0" } });
    try {
      const result = await run(["-p", "hi"]);
      expect(result.code).toBe(75);
      expect(result.stderr).toMatch(/\[ERROR\] RateLimitError: HTTP 429/);
    } finally {
      fake.onRequest = undefined;
    }
  });

  it("exits 1 on a non-retryable provider error", async () => {
    fake.script({ status: 400, body: { error: { message: "bad request", type: "invalid_request_error" } } });
    const result = await run(["-p", "hi"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("[ERROR]");
  });

  it("refuses what needs approval without --yolo, says so, and exits 1", async () => {
    fake.script(
      { toolCalls: [{ name: "shell", arguments: { command: "touch made.txt" } }] },
      { text: "I could not do it." },
    );
    const result = await run(["-p", "make a file"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("--yolo");
    await expect(fs.stat(path.join(workspace, "made.txt"))).rejects.toThrow();
  });

  it("runs it with --yolo", async () => {
    fake.script({ toolCalls: [{ name: "shell", arguments: { command: "touch made.txt" } }] }, { text: "Made it." });
    const result = await run(["-p", "make a file", "--yolo"]);
    expect(result.code).toBe(0);
    await expect(fs.stat(path.join(workspace, "made.txt"))).resolves.toBeDefined();
  });

  it("exits 2 on bad usage", async () => {
    const result = await run(["-p", "x", "--output-format", "xml"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--output-format");
  });
});
