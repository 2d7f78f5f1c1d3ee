import path from "node:path";
import * as z from "zod";
import { isSkipped } from "../ignore";
import type { ToolHost } from "../host";
import { defineTool } from "./define";
import { hostOf } from "./host-of";
import { pathApproval } from "./paths";

/** Entries shown at most; big folders get a note instead of flooding the context. */
export const LIST_DIR_MAX_ENTRIES = 500;

const ListDirParameters = z.object({
  path: z.string().optional().describe("Folder to list, relative to the workspace root (default: the workspace root)."),
  depth: z
    .number()
    .int()
    .min(1)
    .max(5)
    .optional()
    .describe(
      "How many levels to show: 1 (default) lists only this folder, 2 includes its subfolders' contents, and so on.",
    ),
});

export const listDirTool = defineTool({
  name: "list_dir",
  description:
    "List a folder: subfolders end with `/`, files show their size. Hidden entries are included. Use depth to see nested folders; use glob to find files by name.",
  parameters: ListDirParameters,
  needsApproval: async (args, ctx) =>
    pathApproval(await hostOf(ctx).resolve(ctx.cwd, args.path ?? "."), "read", "List"),
  async execute(args, ctx) {
    const host = hostOf(ctx);
    const resolved = await host.resolve(ctx.cwd, args.path ?? ".");
    const stat = await host.stat(resolved.real);
    if (!stat) return { isError: true, output: `Folder not found: ${resolved.display}.` };
    if (stat.type !== "dir")
      return { isError: true, output: `${resolved.display} is a file, not a folder. Use read_file to read it.` };
    const lines: string[] = [];
    const state = { count: 0, truncated: false };
    await listInto(host, resolved.real, args.depth ?? 1, "", lines, state);
    if (lines.length === 0) return `${resolved.display} is empty.`;
    const header = `${resolved.display === "." ? "(workspace root)" : resolved.display}/`;
    const note = state.truncated
      ? `\n[listing truncated at ${LIST_DIR_MAX_ENTRIES} entries; list a subfolder or use glob]`
      : "";
    return `${header}\n${lines.join("\n")}${note}`;
  },
});

async function listInto(
  host: ToolHost,
  dir: string,
  depth: number,
  indent: string,
  lines: string[],
  state: { count: number; truncated: boolean },
): Promise<void> {
  const entries = await host.readDir(dir);
  const isDir = (entry: { type: string }) => Number(entry.type === "dir");
  entries.sort((a, b) => isDir(b) - isDir(a) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (state.count >= LIST_DIR_MAX_ENTRIES) {
      state.truncated = true;
      return;
    }
    state.count++;
    const full = path.join(dir, entry.name);
    if (entry.type === "dir") {
      lines.push(`${indent}${entry.name}/`);
      // Skip-list folders (.git, node_modules, build output) are listed by name but not descended into.
      if (depth > 1 && !isSkipped(entry.name, true)) await listInto(host, full, depth - 1, `${indent}  `, lines, state);
    } else if (entry.type === "symlink") {
      lines.push(`${indent}${entry.name} -> ${entry.linkTarget ?? "?"}`);
    } else {
      const size = entry.size;
      lines.push(`${indent}${entry.name}${size === undefined ? "" : ` (${formatSize(size)})`}`);
    }
  }
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
