import path from "node:path";
import * as z from "zod";
import { defineTool } from "./define";
import { LocalHost, toPosix, type SearchOutcome, type ToolHost } from "../host";
import { hostOf } from "./host-of";
import { pathApproval } from "./paths";

/** Matching lines returned by default; enough to see a pattern's spread without flooding the context. */
export const GREP_DEFAULT_MAX_RESULTS = 100;
export const GREP_MAX_RESULTS_LIMIT = 1000;
/** Long matching lines (minified files) are cut. */
export const GREP_MAX_LINE_CHARS = 400;
const GREP_MAX_CONTEXT = 10;

const GrepParameters = z.object({
  pattern: z
    .string()
    .min(1)
    .describe(
      "Regular expression to search for in file contents, e.g. `function\\s+handle` or `TODO|FIXME`. Escape regex characters to search literally.",
    ),
  path: z
    .string()
    .optional()
    .describe("Folder or file to search, relative to the workspace root (default: the workspace root)."),
  include: z
    .array(z.string())
    .optional()
    .describe(
      'Only search files matching these globs, e.g. ["*.ts", "src/**/*.py"]. A glob without `/` matches the file name in any folder.',
    ),
  exclude: z
    .array(z.string())
    .optional()
    .describe('Skip files or folders matching these globs, e.g. ["*.test.ts", "dist"].'),
  ignore_case: z.boolean().optional().describe("Match case-insensitively."),
  context: z
    .number()
    .int()
    .min(0)
    .max(GREP_MAX_CONTEXT)
    .optional()
    .describe("Lines of context to show before and after each match (default 0)."),
  files_only: z.boolean().optional().describe("List only the paths of files that contain a match."),
  max_results: z
    .number()
    .int()
    .min(1)
    .max(GREP_MAX_RESULTS_LIMIT)
    .optional()
    .describe(`Stop after this many matching lines (default ${GREP_DEFAULT_MAX_RESULTS}).`),
});

export interface GrepToolOptions {
  /** Path of `rg`; undefined looks it up on PATH, null forces the JavaScript search. */
  ripgrep?: string | null;
}

/**
 * grep with system ripgrep when it is on PATH and an in-process search
 * otherwise. Both back ends feed one formatter, so the model sees the same
 * output either way: `path:line:text` for matches, `path-line-text` for
 * context, `--` between separate groups.
 */
export function createGrepTool(options: GrepToolOptions = {}) {
  // A test's choice of back end applies where no session host is given.
  const fallback = options.ripgrep === undefined ? undefined : new LocalHost({ ripgrep: options.ripgrep });
  const hostFor = (ctx: Parameters<typeof hostOf>[0]): ToolHost => ctx.host ?? fallback ?? hostOf(ctx);
  return defineTool({
    name: "grep",
    description:
      "Search file contents with a regular expression. Returns `path:line:text` for matching lines (`path-line-text` for context lines). Skips .git, node_modules, build output and caches, .gitignored and secret files. Use include/exclude globs to narrow the search.",
    parameters: GrepParameters,
    needsApproval: async (args, ctx) =>
      pathApproval(await hostFor(ctx).resolve(ctx.cwd, args.path ?? "."), "read", "Search in"),
    async execute(args, ctx) {
      const host = hostFor(ctx);
      const root = await host.resolve(ctx.cwd, args.path ?? ".");
      const request = {
        pattern: args.pattern,
        root: root.real,
        ignoreCase: args.ignore_case ?? false,
        contextLines: args.files_only ? 0 : (args.context ?? 0),
        include: args.include ?? [],
        exclude: args.exclude ?? [],
        maxMatches: args.max_results ?? GREP_DEFAULT_MAX_RESULTS,
        signal: ctx.signal,
      };
      const outcome = await host.search(request);
      const show = (absolute: string) => (root.inside ? toPosix(path.relative(ctx.cwd, absolute)) : absolute);
      return formatSearch(outcome, show, args.files_only ?? false, request.contextLines > 0, args.pattern);
    },
  });
}

export function formatSearch(
  outcome: SearchOutcome,
  show: (absolute: string) => string,
  filesOnly: boolean,
  withContext: boolean,
  pattern: string,
): string {
  if (outcome.matchCount === 0) return `No matches for ${pattern}.`;
  const out: string[] = [];
  if (filesOnly) {
    for (const file of outcome.files) out.push(show(file.absolute));
  } else {
    for (const file of outcome.files) {
      const name = show(file.absolute);
      let previous = -1;
      for (const line of file.lines) {
        const gap = previous !== -1 && line.number !== previous + 1;
        if (withContext && (gap || (previous === -1 && out.length > 0))) out.push("--");
        const text =
          line.text.length > GREP_MAX_LINE_CHARS
            ? `${line.text.slice(0, GREP_MAX_LINE_CHARS)}… [line truncated]`
            : line.text;
        out.push(`${name}${line.isMatch ? ":" : "-"}${line.number}${line.isMatch ? ":" : "-"}${text}`);
        previous = line.number;
      }
    }
  }
  if (outcome.truncated)
    out.push(
      `[results truncated at ${outcome.matchCount} matching lines; narrow the pattern, path or globs, or raise max_results]`,
    );
  return out.join("\n");
}
