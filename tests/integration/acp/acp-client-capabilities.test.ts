import { spawn } from "node:child_process";
import fs from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { plainText } from "../../support/model-text";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { createTestMcpServer } from "../tools/fixtures/mcp-test-server";
import { cliEnv, ROOT, startAcp, tempDirs, updatesOf, type AcpProcess } from "./support";

/**
 * An editor-like ACP client: it advertises fs and terminal, keeps "unsaved
 * buffers" that differ from the disk, records writes without touching the disk,
 * and runs terminal commands as real child processes.
 */
interface Terminal {
  output: string;
  exit?: { exitCode: number | null; signal: string | null };
  exited: Promise<void>;
  kill: () => void;
  released: boolean;
}

const TSX = path.join(ROOT, "node_modules/.bin/tsx");
const MCP_SERVER = path.join(ROOT, "tests/integration/tools/fixtures/mcp-stdio-server.ts");
// A 1×1 PNG.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

let fake: FakeLlm;
let proc: AcpProcess;
let workspace: string;
let home: string;
let sessionId: string;
const buffers = new Map<string, string>();
const reads: acp.ReadTextFileRequest[] = [];
const writes: acp.WriteTextFileRequest[] = [];
const created: acp.CreateTerminalRequest[] = [];
const terminals = new Map<string, Terminal>();

beforeAll(async () => {
  fake = await startFakeLlm();
  ({ home, workspace } = await tempDirs());
  await fs.writeFile(path.join(workspace, "buffer.ts"), "on disk\n");
  buffers.set(path.join(workspace, "buffer.ts"), "unsaved line 1\nunsaved line 2\nunsaved line 3\n");
  proc = startAcp({
    cwd: workspace,
    env: cliEnv(home, fake.url),
    client: (app) =>
      app
        .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
          reads.push(params);
          const text = buffers.get(params.path);
          if (text === undefined) throw acp.RequestError.resourceNotFound(params.path);
          const lines = text.split("\n");
          const from = (params.line ?? 1) - 1;
          return { content: lines.slice(from, params.limit ? from + params.limit : undefined).join("\n") };
        })
        .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
          writes.push(params);
          buffers.set(params.path, params.content);
          return {};
        })
        .onRequest(acp.methods.client.terminal.create, ({ params }) => {
          created.push(params);
          const child = spawn(params.command, params.args ?? [], {
            cwd: params.cwd ?? workspace,
            env: { ...process.env, ...Object.fromEntries((params.env ?? []).map((v) => [v.name, v.value])) },
          });
          const terminal: Terminal = {
            output: "",
            released: false,
            kill: () => child.kill("SIGKILL"),
            exited: Promise.resolve(),
          };
          child.stdout.on("data", (chunk: Buffer) => (terminal.output += chunk.toString()));
          child.stderr.on("data", (chunk: Buffer) => (terminal.output += chunk.toString()));
          terminal.exited = new Promise((resolve) =>
            child.on("close", (code, signal) => {
              terminal.exit = { exitCode: code, signal };
              resolve();
            }),
          );
          const terminalId = `term_${terminals.size + 1}`;
          terminals.set(terminalId, terminal);
          return { terminalId };
        })
        .onRequest(acp.methods.client.terminal.waitForExit, async ({ params }) => {
          const terminal = terminals.get(params.terminalId)!;
          await terminal.exited;
          return terminal.exit!;
        })
        .onRequest(acp.methods.client.terminal.output, ({ params }) => {
          const terminal = terminals.get(params.terminalId)!;
          return { output: terminal.output, truncated: false, exitStatus: terminal.exit ?? null };
        })
        .onRequest(acp.methods.client.terminal.kill, ({ params }) => {
          terminals.get(params.terminalId)!.kill();
          return {};
        })
        .onRequest(acp.methods.client.terminal.release, ({ params }) => {
          const terminal = terminals.get(params.terminalId)!;
          terminal.released = true;
          terminal.kill();
          return {};
        }),
  });
  await proc.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
  });
  const session = await proc.agent.request(acp.methods.agent.session.new, {
    cwd: workspace,
    mcpServers: [{ name: "tester", command: TSX, args: [MCP_SERVER], env: [{ name: "MCP_TEST", value: "1" }] }],
  });
  sessionId = session.sessionId;
});

afterAll(async () => {
  await proc?.stop();
  await fake?.close();
});

beforeEach(() => fake.reset());

type Message = { role: string; content: unknown; tool_call_id?: string };
const toolResults = (index: number) =>
  (fake.requests[index].body.messages as Message[])
    .filter((m) => m.role === "tool")
    .map((m) => plainText(String(m.content)));

async function prompt(text: string | acp.ContentBlock[]) {
  return proc.agent.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: typeof text === "string" ? [{ type: "text", text }] : text,
  });
}

describe("worldline acp with a client that offers fs and terminal", () => {
  it("reads files through the client (unsaved buffers), numbered like the local tool", async () => {
    fake.script(
      { toolCalls: [{ name: "read_file", arguments: { path: "buffer.ts", offset: 2, limit: 1 } }] },
      { text: "read" },
    );
    expect((await prompt("Read it.")).stopReason).toBe("end_turn");
    expect(reads.at(-1)).toMatchObject({ sessionId, path: path.join(workspace, "buffer.ts"), line: 2, limit: 2 });
    expect(toolResults(1).at(-1)).toBe(
      "     2\tunsaved line 2\n[showing lines 2-2; call read_file with offset=3 to continue]",
    );
  });

  it("writes and edits through the client after the permission, leaving the disk to the editor", async () => {
    proc.permission.asked.length = 0;
    fake.script(
      { toolCalls: [{ name: "write_file", arguments: { path: "new.txt", content: "fresh\n" } }] },
      {
        toolCalls: [
          {
            name: "str_replace",
            arguments: { path: "buffer.ts", edits: [{ old_text: "unsaved line 3", new_text: "edited line 3" }] },
          },
        ],
      },
      { text: "edited" },
    );
    expect((await prompt("Write and edit.")).stopReason).toBe("end_turn");
    expect(proc.permission.asked.map((request) => request.toolCall.title)).toHaveLength(2);
    // The edit was checked against the editor's buffer (it does not apply to the disk's text).
    expect(JSON.stringify(proc.permission.asked[1].toolCall.content)).toContain("Edit buffer.ts");
    expect(JSON.stringify(proc.permission.asked[1].toolCall.content)).not.toContain("do not apply");
    expect(writes.map((w) => [path.basename(w.path), w.content])).toEqual([
      ["new.txt", "fresh\n"],
      ["buffer.ts", "unsaved line 1\nunsaved line 2\nedited line 3\n"],
    ]);
    expect(toolResults(1).at(-1)).toBe("Created new.txt (6 bytes).");
    expect(toolResults(2).at(-1)).toBe("Edited buffer.ts (1 edit applied).");
    // The editor owns the files: nothing was written to disk by the agent.
    await expect(fs.access(path.join(workspace, "new.txt"))).rejects.toThrow();
    expect(await fs.readFile(path.join(workspace, "buffer.ts"), "utf8")).toBe("on disk\n");
    // The edit's diff went to the client.
    const diffs = updatesOf(proc.updates, sessionId, "tool_call_update")
      .flatMap((u) => u.content ?? [])
      .filter((c) => c.type === "diff");
    expect(diffs.some((d) => d.type === "diff" && d.newText.includes("edited line 3"))).toBe(true);
  });

  it("runs commands in the client's terminal, embeds it in the tool call, then releases it", async () => {
    fake.script(
      { toolCalls: [{ name: "shell", arguments: { command: "echo from-terminal; exit 3" } }] },
      { text: "ran" },
    );
    expect((await prompt("Run it.")).stopReason).toBe("end_turn");
    expect(created.at(-1)).toMatchObject({
      sessionId,
      command: "bash",
      args: ["-c", "echo from-terminal; exit 3"],
      cwd: workspace,
    });
    expect(toolResults(1).at(-1)).toBe("from-terminal\n[exit code: 3]");
    const terminalId = [...terminals.keys()].at(-1)!;
    const embedded = updatesOf(proc.updates, sessionId, "tool_call_update").flatMap((u) => u.content ?? []);
    expect(embedded).toContainEqual({ type: "terminal", terminalId });
    expect(terminals.get(terminalId)!.released).toBe(true);
  });

  it("kills the client's command on timeout", async () => {
    fake.script(
      { toolCalls: [{ name: "shell", arguments: { command: "sleep 30", timeout_seconds: 0.5 } }] },
      { text: "gave up" },
    );
    expect((await prompt("Wait forever.")).stopReason).toBe("end_turn");
    expect(toolResults(1).at(-1)).toMatch(/timed out after 1s|timed out after 0s/);
  });

  it("offers the MCP servers sent with session/new as the session's tools", async () => {
    proc.permission.asked.length = 0;
    fake.script({ toolCalls: [{ name: "tester__echo", arguments: { text: "via acp" } }] }, { text: "echoed" });
    expect((await prompt("Use MCP.")).stopReason).toBe("end_turn");
    const offered = (fake.requests[0].body.tools as { function: { name: string } }[]).map((tool) => tool.function.name);
    expect(offered).toEqual(expect.arrayContaining(["tester__echo", "read_file", "shell"]));
    expect(proc.permission.asked).toHaveLength(1);
    expect(toolResults(1).at(-1)).toBe("echo: via acp");
  });

  it("connects streamable HTTP MCP servers (with headers) sent with session/load, replacing the earlier ones", async () => {
    const server = http.createServer(async (req, res) => {
      if (req.headers["x-test-key"] !== "k1") {
        res.statusCode = 401;
        res.end();
        return;
      }
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      const mcp = createTestMcpServer();
      res.on("close", () => {
        void transport.close();
        void mcp.close();
      });
      await mcp.connect(transport);
      await transport.handleRequest(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
      await proc.agent.request(acp.methods.agent.session.load, {
        sessionId,
        cwd: workspace,
        mcpServers: [{ type: "http", name: "web", url, headers: [{ name: "x-test-key", value: "k1" }] }],
      });
      fake.script({ toolCalls: [{ name: "web__echo", arguments: { text: "over http" } }] }, { text: "ok" });
      expect((await prompt("Use the web server.")).stopReason).toBe("end_turn");
      const offered = (fake.requests[0].body.tools as { function: { name: string } }[]).map(
        (tool) => tool.function.name,
      );
      expect(offered).toContain("web__echo");
      expect(offered.some((name) => name.startsWith("tester__"))).toBe(false);
      expect(toolResults(1).at(-1)).toBe("echo: over http");
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("passes image blocks to the model as image_url parts", async () => {
    fake.script({ text: "A single pixel." });
    const response = await prompt([
      { type: "text", text: "What is in this image?" },
      { type: "image", mimeType: "image/png", data: PNG },
    ]);
    expect(response.stopReason).toBe("end_turn");
    // The prompt's message (checkpoint markers are user messages too).
    const user = (fake.requests[0].body.messages as Message[]).find(
      (m) => m.role === "user" && JSON.stringify(m.content).includes("What is in this image?"),
    )!;
    expect(Array.isArray(user.content)).toBe(true);
    const parts = user.content as { type: string; text?: string; image_url?: { url: string } }[];
    expect(parts[0].type).toBe("text");
    expect(parts[0].text).toContain("What is in this image?");
    expect(parts[1]).toEqual({ type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } });
  });
});
