import { promises as fs } from "node:fs";
import { z } from "zod";
import { defineTool } from "./define";
import { unifiedDiff } from "../diff";
import { pathApproval, resolveInWorkspace, writeResolvedFile } from "./paths";
import { statOrNull } from "../stat-or-null";

const WriteFileParameters = z.object({
  path: z
    .string()
    .describe("File to create or overwrite, relative to the workspace root. Missing parent folders are created."),
  content: z
    .string()
    .describe("The complete new content of the file. To change part of an existing file, prefer str_replace."),
});

export const writeFileTool = defineTool({
  name: "write_file",
  description:
    "Create a file or replace its whole content. Parent folders are created. For changes to part of an existing file use str_replace instead; it is safer and cheaper.",
  parameters: WriteFileParameters,
  async needsApproval(args, ctx) {
    const resolved = await resolveInWorkspace(ctx.cwd, args.path);
    const before = await readExisting(resolved.real);
    const diff = unifiedDiff(resolved.display, before ?? "", args.content);
    return pathApproval(resolved, "write", before === undefined ? "Create" : "Overwrite", diff);
  },
  async execute(args, ctx) {
    const resolved = await resolveInWorkspace(ctx.cwd, args.path);
    const before = await readExisting(resolved.real);
    const stat = await statOrNull(resolved.real);
    if (stat?.isDirectory()) return { isError: true, output: `${resolved.display} is a directory; give a file path.` };
    await writeResolvedFile(resolved, args.content);
    const bytes = Buffer.byteLength(args.content, "utf8");
    return {
      isError: false,
      output: `${before === undefined ? "Created" : "Overwrote"} ${resolved.display} (${bytes} bytes).`,
      display: { path: resolved.display, diff: unifiedDiff(resolved.display, before ?? "", args.content) },
    };
  },
});

async function readExisting(file: string): Promise<string | undefined> {
  return fs.readFile(file, "utf8").catch(() => undefined); // a new file: its diff starts from nothing
}
