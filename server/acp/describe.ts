import path from "node:path";
import type * as acp from "@agentclientprotocol/sdk";

/** How a Worldline tool call looks to an ACP client: a human title, a kind, the files it touches. */
export interface ToolPresentation {
  title: string;
  kind: acp.ToolKind;
  locations: acp.ToolCallLocation[];
}

type Args = Record<string, unknown>;

const KIND_BY_TOOL: Record<string, acp.ToolKind> = {
  read_file: "read",
  list_dir: "read",
  task_output: "read",
  write_file: "edit",
  str_replace: "edit",
  glob: "search",
  grep: "search",
  shell: "execute",
  task_stop: "execute",
  fetch_url: "fetch",
  todo: "think",
  send_dmail: "think",
};

/** Titles read like a log line: "Read file: src/a.ts", "Run command: ls -la". */
export function describeToolCall(name: string, rawArgs: unknown, workspace: string): ToolPresentation {
  const args: Args = rawArgs && typeof rawArgs === "object" ? (rawArgs as Args) : {};
  const str = (key: string) => (typeof args[key] === "string" ? (args[key] as string) : undefined);
  const file = str("path");
  const locations = file
    ? [{ path: path.resolve(workspace, file), ...(typeof args.offset === "number" ? { line: args.offset } : {}) }]
    : [];
  const kind = KIND_BY_TOOL[name] ?? "other";
  switch (name) {
    case "read_file":
      return { title: `Read file: ${file ?? "?"}`, kind, locations };
    case "write_file":
      return { title: `Write file: ${file ?? "?"}`, kind, locations };
    case "str_replace":
      return { title: `Edit file: ${file ?? "?"}`, kind, locations };
    case "list_dir":
      return { title: `List folder: ${file ?? "."}`, kind, locations };
    case "glob":
      return { title: `Find files: ${str("pattern") ?? "?"}`, kind, locations };
    case "grep":
      return { title: `Search: ${str("pattern") ?? "?"}${file ? ` in ${file}` : ""}`, kind, locations };
    case "shell":
      return { title: `Run command: ${oneLine(str("command") ?? "?")}`, kind, locations };
    case "fetch_url":
      return { title: `Fetch: ${str("url") ?? "?"}`, kind, locations };
    case "task_output":
      return { title: `Read task output: ${str("task_id") ?? "?"}`, kind, locations };
    case "task_stop":
      return { title: `Stop task: ${str("task_id") ?? "?"}`, kind, locations };
    case "todo":
      return { title: "Update plan", kind, locations };
    default:
      return { title: name.startsWith("mcp__") ? `MCP: ${name.slice(5)}` : `Tool: ${name}`, kind, locations };
  }
}

/**
 * The diff content of an edit, as ACP wants it (old and new text, not a
 * unified diff): a whole file for write_file, each replaced snippet for str_replace.
 */
export function diffContent(name: string, rawArgs: unknown, workspace: string): acp.ToolCallContent[] {
  const args: Args = rawArgs && typeof rawArgs === "object" ? (rawArgs as Args) : {};
  if (typeof args.path !== "string") return [];
  const file = path.resolve(workspace, args.path);
  if (name === "write_file" && typeof args.content === "string") {
    return [{ type: "diff", path: file, oldText: null, newText: args.content }];
  }
  if (name === "str_replace" && Array.isArray(args.edits)) {
    return args.edits
      .filter(
        (edit): edit is { old_text: string; new_text: string } =>
          !!edit && typeof edit.old_text === "string" && typeof edit.new_text === "string",
      )
      .map((edit) => ({ type: "diff" as const, path: file, oldText: edit.old_text, newText: edit.new_text }));
  }
  return [];
}

export function textContent(text: string): acp.ToolCallContent {
  return { type: "content", content: { type: "text", text } };
}

function oneLine(text: string): string {
  const line = text.replace(/\s*\n\s*/g, " ⏎ ").trim();
  return line.length > MAX_TITLE_CHARS ? `${line.slice(0, MAX_TITLE_CHARS - 1)}…` : line;
}

/** Clients show the title on one line; long commands are cut. */
const MAX_TITLE_CHARS = 200;
