import { describe, expect, it } from "vitest";
import { matchesTool, parseHooksFile } from "../../../server/hooks";

describe("hooks files", () => {
  it("reads Claude Code's schema, with a default time limit of 60 s", () => {
    const file = parseHooksFile(
      "/ws/.claude/settings.json",
      JSON.stringify({
        hooks: {
          PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "check.sh", timeout: 5 }] }],
          Stop: [{ hooks: [{ type: "command", command: "notify.sh" }] }],
        },
      }),
    );
    expect(file.error).toBeUndefined();
    expect(file.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(file.entries).toEqual([
      {
        event: "PreToolUse",
        matcher: "Bash",
        command: "check.sh",
        timeoutMs: 5_000,
        file: "/ws/.claude/settings.json",
      },
      { event: "Stop", matcher: "", command: "notify.sh", timeoutMs: 60_000, file: "/ws/.claude/settings.json" },
    ]);
  });

  it("a settings file without hooks has no entries and no error", () => {
    expect(parseHooksFile("/ws/.claude/settings.json", '{"permissions":{}}')).toMatchObject({ entries: [] });
  });

  it("names the line of a JSON error, an unknown event, a bad field and a bad matcher", () => {
    expect(parseHooksFile("f", '{\n "hooks": {\n  x\n }\n}').error).toMatch(/^f:3: not valid JSON/);
    const unknown = parseHooksFile("f", '{\n  "hooks": {\n    "OnLunch": []\n  }\n}');
    expect(unknown.error).toMatch(/^f:3: unknown hook event "OnLunch"/);
    expect(unknown.entries).toEqual([]);
    const field = parseHooksFile("f", '{\n  "hooks": {\n    "Stop": [{ "hooks": [{ "type": "prompt" }] }]\n  }\n}');
    expect(field.error).toMatch(/^f:3: /);
    const matcher = parseHooksFile("f", '{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": []}]}}');
    expect(matcher.error).toContain("is not a valid regular expression");
  });

  it("matchers fire on our tool names and Claude Code's, matched whole", () => {
    expect(matchesTool("Bash", "shell")).toBe(true);
    expect(matchesTool("Edit|Write", "str_replace")).toBe(true);
    expect(matchesTool("Edit|Write", "write_file")).toBe(true);
    expect(matchesTool("Edit|Write", "read_file")).toBe(false);
    expect(matchesTool("read", "read_file")).toBe(false);
    expect(matchesTool("read_.*", "read_file")).toBe(true);
    expect(matchesTool("", "glob")).toBe(true);
    expect(matchesTool("*", "glob")).toBe(true);
    expect(matchesTool("WebFetch", "fetch_url")).toBe(true);
  });
});
