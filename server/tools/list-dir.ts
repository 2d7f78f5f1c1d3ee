import { promises as fs } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { isSkipped } from "../ignore";
import { defineTool } from "./define";
import { pathApproval, resolveInWorkspace } from "./paths";
import { statOrNull } from "../stat-or-null";

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
  needsApproval: async (args, ctx) => pathApproval(await resolveInWorkspace(ctx.cwd, args.path ?? "."), "read", "List"),
  async execute(args, ctx) {
    const resolved = await resolveInWorkspace(ctx.cwd, args.path ?? ".");
    const stat = await statOrNull(resolved.real);
    if (!stat) return { isError: true, output: `Folder not found: ${resolved.display}.` };
    if (!stat.isDirectory())
      return { isError: true, output: `${resolved.display} is a file, not a folder. Use read_file to read it.` };
    const lines: string[] = [];
    const state = { count: 0, truncated: false };
    await listInto(resolved.real, args.depth ?? 1, "", lines, state);
    if (lines.length === 0) return `${resolved.display} is empty.`;
    const header = `${resolved.display === "." ? "(workspace root)" : resolved.display}/`;
    const note = state.truncated
      ? `\n[listing truncated at ${LIST_DIR_MAX_ENTRIES} entries; list a subfolder or use glob]`
      : "";
    return `${header}\n${lines.join("\n")}${note}`;
  },
});

async function listInto(
  dir: string,
  depth: number,
  indent: string,
  lines: string[],
  state: { count: number; truncated: boolean },
): Promise<void> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  entries.sort(
    (a, b) => Number(b.isDirectory()) - Number(a.isDirectory()) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
  for (const entry of entries) {
    if (state.count >= LIST_DIR_MAX_ENTRIES) {
      state.truncated = true;
      return;
    }
    state.count++;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      lines.push(`${indent}${entry.name}/`);
      // Skip-list folders (.git, node_modules, build output) are listed by name but not descended into.
      if (depth > 1 && !isSkipped(entry.name, true)) await listInto(full, depth - 1, `${indent}  `, lines, state);
    } else if (entry.isSymbolicLink()) {
      const target = await fs.readlink(full).catch(() => "?");
      lines.push(`${indent}${entry.name} -> ${target}`);
    } else {
      // An entry that vanished or cannot be read still lists, without a size.
      const size = (await fs.stat(full).catch(() => undefined))?.size;
      lines.push(`${indent}${entry.name}${size === undefined ? "" : ` (${formatSize(size)})`}`);
    }
  }
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
