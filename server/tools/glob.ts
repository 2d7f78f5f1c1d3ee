import path from "node:path";
import * as z from "zod";
import { defineTool } from "./define";
import { toPosix } from "../host";
import { hostOf } from "./host-of";
import { pathApproval } from "./paths";

/** Paths listed at most; a model rarely needs more and can narrow the pattern. */
export const GLOB_MAX_RESULTS = 200;

const GlobParameters = z.object({
  pattern: z
    .string()
    .min(1)
    .describe(
      "Glob pattern such as `**/*.ts` or `src/**/test_*.py`, matched against paths relative to `path`. `*` stays within one folder; use `**/` to search subfolders.",
    ),
  path: z
    .string()
    .optional()
    .describe("Folder to search from, relative to the workspace root (default: the workspace root)."),
});

export const globTool = defineTool({
  name: "glob",
  description:
    "Find files by name pattern. Returns matching file paths relative to the workspace, most recently modified first. Skips .git, node_modules, build output and caches, files ignored by .gitignore and secret files such as .env.",
  parameters: GlobParameters,
  needsApproval: async (args, ctx) =>
    pathApproval(await hostOf(ctx).resolve(ctx.cwd, args.path ?? "."), "read", "Search files in"),
  async execute(args, ctx) {
    const host = hostOf(ctx);
    const base = await host.resolve(ctx.cwd, args.path ?? ".");
    const stat = await host.stat(base.real);
    if (stat?.type !== "dir") return { isError: true, output: `Not a folder: ${base.display}. Give a folder as path.` };
    const pattern = args.pattern.startsWith("./") ? args.pattern.slice(2) : args.pattern;
    const found = (await host.glob(base.real, pattern, ctx.signal)).map((file) => ({
      path: base.inside ? toPosix(path.relative(ctx.cwd, file.absolute)) : file.absolute,
      mtime: file.mtimeMs,
    }));
    if (found.length === 0) return `No files match ${args.pattern} in ${base.display}.`;
    found.sort((a, b) => b.mtime - a.mtime || (a.path < b.path ? -1 : 1));
    const shown = found.slice(0, GLOB_MAX_RESULTS).map((f) => f.path);
    if (found.length > GLOB_MAX_RESULTS) {
      shown.push(`[results truncated: ${found.length - GLOB_MAX_RESULTS} more files; use a narrower pattern or path]`);
    }
    return shown.join("\n");
  },
});
