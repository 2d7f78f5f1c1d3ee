import { describe, expect, it } from "vitest";
import { layerTools, type AgentTool } from "../../../server/agent";
import { mcpConfigs, promptImages, promptText } from "../../../server/acp";

const tool = (name: string, description = name): AgentTool => ({
  name,
  description,
  jsonSchema: { type: "object" },
  needsApproval: async () => ({ level: "none", subject: name, scope: name, description, risk: "none" }),
  run: async () => ({ output: description, isError: false }),
});

describe("per-session tool layers", () => {
  it("replaces tools of the same name in place and appends the others, layer by layer", () => {
    const result = layerTools(
      [tool("read_file"), tool("shell")],
      [[tool("shell", "client shell"), tool("mcp__echo")], [tool("read_file", "client read")]],
    );
    expect(result.map((t) => `${t.name}:${t.description}`)).toEqual([
      "read_file:client read",
      "shell:client shell",
      "mcp__echo:mcp__echo",
    ]);
  });
});

describe("ACP inputs", () => {
  it("turns ACP MCP server entries into Worldline's MCP config (stdio, http; sse skipped)", () => {
    expect(
      mcpConfigs([
        { name: "local", command: "node", args: ["s.js"], env: [{ name: "K", value: "v" }] },
        {
          type: "http",
          name: "web",
          url: "http://127.0.0.1:1/mcp",
          headers: [{ name: "authorization", value: "Bearer x" }],
        },
        { type: "sse", name: "old", url: "http://127.0.0.1:1/sse", headers: [] },
      ]),
    ).toEqual({
      local: { command: "node", args: ["s.js"], env: { K: "v" } },
      web: { url: "http://127.0.0.1:1/mcp", headers: { authorization: "Bearer x" } },
    });
  });

  it("collects images as data URLs and names them in the text", () => {
    const blocks = [
      { type: "text" as const, text: "Look:" },
      { type: "image" as const, mimeType: "image/png", data: "AAAA" },
      { type: "resource" as const, resource: { uri: "file:///tmp/a.jpg", mimeType: "image/jpeg", blob: "BBBB" } },
      {
        type: "resource" as const,
        resource: { uri: "file:///tmp/a.bin", mimeType: "application/octet-stream", blob: "CCCC" },
      },
    ];
    expect(promptImages(blocks)).toEqual(["data:image/png;base64,AAAA", "data:image/jpeg;base64,BBBB"]);
    const text = promptText(blocks);
    expect(text).toContain("[Attached image (image/png, 3 bytes)]");
    expect(text).toContain("[Attached image /tmp/a.jpg (image/jpeg)]");
    expect(text).toContain("was not included");
  });
});
