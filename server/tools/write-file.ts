import * as z from "zod";
import { defineTool } from "./define";
import { unifiedDiff } from "../diff";
import { withDiagnostics } from "./diagnostics-section";
import { hostOf } from "./host-of";
import { pathApproval } from "./paths";

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
    const host = hostOf(ctx);
    const resolved = await host.resolve(ctx.cwd, args.path);
    const before = await host.readText(resolved.real);
    const diff = unifiedDiff(resolved.display, before ?? "", args.content);
    return pathApproval(resolved, "write", before === undefined ? "Create" : "Overwrite", diff);
  },
  async execute(args, ctx) {
    const host = hostOf(ctx);
    const resolved = await host.resolve(ctx.cwd, args.path);
    const stat = await host.stat(resolved.real);
    if (stat?.type === "dir") return { isError: true, output: `${resolved.display} is a directory; give a file path.` };
    const before = await host.readText(resolved.real);
    await host.writeResolved(resolved, args.content);
    const bytes = Buffer.byteLength(args.content, "utf8");
    return withDiagnostics(ctx, resolved, args.content, {
      isError: false,
      output: `${before === undefined ? "Created" : "Overwrote"} ${resolved.display} (${bytes} bytes).`,
      display: { path: resolved.display, diff: unifiedDiff(resolved.display, before ?? "", args.content) },
    });
  },
});
