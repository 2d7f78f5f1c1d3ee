import * as z from "zod";
import type { TextPage } from "../host";
import { defineTool } from "./define";
import { hostOf } from "./host-of";
import { pathApproval } from "./paths";

/** Lines returned when the model gives no limit; enough for most source files. */
export const READ_DEFAULT_LIMIT = 2000;
/** Longer lines (minified code, data) are cut so one line cannot fill the context. */
export const READ_MAX_LINE_CHARS = 2000;
/** Total characters of one read, a little under the shared tool output cap so the note survives. */
export const READ_MAX_OUTPUT_CHARS = 45_000;
const ReadFileParameters = z.object({
  path: z
    .string()
    .describe(
      "File to read, relative to the workspace root (absolute paths and ~ also work but need approval when outside the workspace).",
    ),
  offset: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("1-based line number to start from. Use it with `limit` to page through long files."),
  limit: z.number().int().min(1).optional().describe(`How many lines to return (default ${READ_DEFAULT_LIMIT}).`),
});

export const readFileTool = defineTool({
  name: "read_file",
  description:
    "Read a text file from the workspace. Returns numbered lines (`   12\\tcode`); the numbers are not part of the file. Use offset/limit for long files. Binary files are refused.",
  parameters: ReadFileParameters,
  needsApproval: async (args, ctx) => pathApproval(await hostOf(ctx).resolve(ctx.cwd, args.path), "read", "Read"),
  async execute(args, ctx) {
    const offset = args.offset ?? 1;
    const limit = args.limit ?? READ_DEFAULT_LIMIT;
    const request = { offset, limit, maxLineChars: READ_MAX_LINE_CHARS };
    const { resolved, page } = await hostOf(ctx).resolvePage(ctx.cwd, args.path, request);
    if (page.kind === "missing")
      return {
        isError: true,
        output: `File not found: ${resolved.display}. Use glob or list_dir to find the right path.`,
      };
    if (page.kind === "directory")
      return { isError: true, output: `${resolved.display} is a directory. Use list_dir to see its contents.` };
    if (page.kind === "binary") {
      return {
        isError: true,
        output: `${resolved.display} is a binary file (${page.size} bytes); read_file only shows text.`,
      };
    }
    if (page.totalLines === 0) return `${resolved.display} is empty.`;
    if (page.lines.length === 0) {
      return {
        isError: true,
        output: `${resolved.display} has ${page.totalLines} lines; offset ${offset} is past the end.`,
      };
    }
    return formatPage(page, offset, resolved.display);
  },
});

function formatPage(page: Extract<TextPage, { kind: "page" }>, offset: number, display: string): string {
  const out: string[] = [];
  let chars = 0;
  let shown = 0;
  for (const line of page.lines) {
    const numbered = `${String(offset + shown).padStart(6)}\t${line}`;
    if (chars + numbered.length + 1 > READ_MAX_OUTPUT_CHARS && shown > 0) break;
    out.push(numbered);
    chars += numbered.length + 1;
    shown++;
  }
  const lastShown = offset + shown - 1;
  const notes: string[] = [];
  if (page.note) notes.push(`[${display}: ${page.note}]`);
  const more = page.totalLines < 0 || lastShown < page.totalLines;
  if (more) {
    const of = page.totalLines < 0 ? "" : ` of ${page.totalLines}`;
    notes.push(`[showing lines ${offset}-${lastShown}${of}; call read_file with offset=${lastShown + 1} to continue]`);
  }
  return notes.length > 0 ? `${out.join("\n")}\n${notes.join("\n")}` : out.join("\n");
}
