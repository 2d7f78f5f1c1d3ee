import { createReadStream, promises as fs } from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { z } from "zod";
import { defineTool } from "./define";
import { pathApproval, resolveInWorkspace } from "./paths";
import { statOrNull } from "../stat-or-null";

/** Lines returned when the model gives no limit; enough for most source files. */
export const READ_DEFAULT_LIMIT = 2000;
/** Longer lines (minified code, data) are cut so one line cannot fill the context. */
export const READ_MAX_LINE_CHARS = 2000;
/** Total characters of one read, a little under the shared tool output cap so the note survives. */
export const READ_MAX_OUTPUT_CHARS = 45_000;
/** Files up to this size are decoded in memory (with a strict UTF-8 check); larger ones are streamed. */
const READ_IN_MEMORY_BYTES = 10 * 1024 * 1024;
/** Bytes inspected to tell text from binary. */
const BINARY_SNIFF_BYTES = 8192;

const BINARY_EXTENSIONS = new Set(
  "png jpg jpeg gif webp bmp ico tiff psd pdf zip gz tgz bz2 xz 7z rar jar war class exe dll so dylib o a wasm bin dat db sqlite mp3 mp4 m4a wav ogg flac mov avi mkv webm woff woff2 ttf otf eot pyc".split(
    " ",
  ),
);

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
  needsApproval: async (args, ctx) => pathApproval(await resolveInWorkspace(ctx.cwd, args.path), "read", "Read"),
  async execute(args, ctx) {
    const resolved = await resolveInWorkspace(ctx.cwd, args.path);
    const stat = await statOrNull(resolved.real);
    if (!stat)
      return {
        isError: true,
        output: `File not found: ${resolved.display}. Use glob or list_dir to find the right path.`,
      };
    if (stat.isDirectory())
      return { isError: true, output: `${resolved.display} is a directory. Use list_dir to see its contents.` };
    if (await looksBinary(resolved.real)) {
      return {
        isError: true,
        output: `${resolved.display} is a binary file (${stat.size} bytes); read_file only shows text.`,
      };
    }
    const offset = args.offset ?? 1;
    const limit = args.limit ?? READ_DEFAULT_LIMIT;
    const page =
      stat.size <= READ_IN_MEMORY_BYTES
        ? await readPageInMemory(resolved.real, offset, limit)
        : await readPageStreaming(resolved.real, offset, limit);
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

interface Page {
  lines: string[];
  /** Lines in the file, or -1 when streaming stopped early. */
  totalLines: number;
  note?: string;
}

async function looksBinary(file: string): Promise<boolean> {
  if (BINARY_EXTENSIONS.has(path.extname(file).slice(1).toLowerCase())) return true;
  const handle = await fs.open(file, "r");
  try {
    const buffer = Buffer.alloc(BINARY_SNIFF_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, BINARY_SNIFF_BYTES, 0);
    const sample = buffer.subarray(0, bytesRead);
    // UTF-16 text has NUL bytes but a BOM; everything else with NUL is binary.
    if (sample[0] === 0xff && sample[1] === 0xfe) return false;
    if (sample[0] === 0xfe && sample[1] === 0xff) return false;
    return sample.includes(0);
  } finally {
    await handle.close();
  }
}

/** Decodes bytes as UTF-8 (or UTF-16 with a BOM), falling back to Latin-1 with a note for anything else. */
export function decodeText(bytes: Buffer): { text: string; note?: string } {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return { text: new TextDecoder("utf-16le").decode(bytes.subarray(2)) };
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return { text: new TextDecoder("utf-16be").decode(bytes.subarray(2)) };
  try {
    return { text: new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes) };
  } catch {
    return { text: new TextDecoder("latin1").decode(bytes), note: "not valid UTF-8; shown decoded as Latin-1" };
  }
}

async function readPageInMemory(file: string, offset: number, limit: number): Promise<Page> {
  const { text, note } = decodeText(await fs.readFile(file));
  if (text === "") return { lines: [], totalLines: 0 };
  const all = text.split(/\r?\n/);
  if (all[all.length - 1] === "") all.pop();
  return { lines: all.slice(offset - 1, offset - 1 + limit), totalLines: all.length, note };
}

async function readPageStreaming(file: string, offset: number, limit: number): Promise<Page> {
  const stream = createReadStream(file, { encoding: "utf8" });
  const reader = readline.createInterface({ input: stream, crlfDelay: Infinity });
  const lines: string[] = [];
  let lineNumber = 0;
  try {
    for await (const line of reader) {
      lineNumber++;
      if (lineNumber < offset) continue;
      if (lines.length >= limit)
        return { lines, totalLines: -1, note: "large file; invalid UTF-8 bytes are shown as �" };
      lines.push(line);
    }
  } finally {
    reader.close();
    stream.destroy();
  }
  return { lines, totalLines: lineNumber, note: "large file; invalid UTF-8 bytes are shown as �" };
}

function formatPage(page: Page, offset: number, display: string): string {
  const out: string[] = [];
  let chars = 0;
  let shown = 0;
  for (const raw of page.lines) {
    const line =
      raw.length > READ_MAX_LINE_CHARS
        ? `${raw.slice(0, READ_MAX_LINE_CHARS)}… [line truncated: ${raw.length - READ_MAX_LINE_CHARS} more characters]`
        : raw;
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
