import { createReadStream, promises as fs } from "node:fs";
import path from "node:path";
import readline from "node:readline";
import type { PageRequest, TextPage } from "./types";
import { statOrNull } from "../stat-or-null";

/** Files up to this size are decoded in memory (with a strict UTF-8 check); larger ones are streamed. */
const READ_IN_MEMORY_BYTES = 10 * 1024 * 1024;
/** Bytes inspected to tell text from binary. */
const BINARY_SNIFF_BYTES = 8192;

const BINARY_EXTENSIONS = new Set(
  "png jpg jpeg gif webp bmp ico tiff psd pdf zip gz tgz bz2 xz 7z rar jar war class exe dll so dylib o a wasm bin dat db sqlite mp3 mp4 m4a wav ogg flac mov avi mkv webm woff woff2 ttf otf eot pyc".split(
    " ",
  ),
);

/**
 * A page of a text file for read_file. Long lines are cut here, where the file is, so a
 * minified line never crosses a runner's connection whole.
 */
export async function readTextPage(file: string, request: PageRequest): Promise<TextPage> {
  const stat = await statOrNull(file);
  if (!stat) return { kind: "missing" };
  if (stat.isDirectory()) return { kind: "directory" };
  if (await looksBinary(file)) return { kind: "binary", size: stat.size };
  const page =
    stat.size <= READ_IN_MEMORY_BYTES
      ? await readPageInMemory(file, request.offset, request.limit)
      : await readPageStreaming(file, request.offset, request.limit);
  return { kind: "page", ...page, lines: page.lines.map((line) => cutLine(line, request.maxLineChars)) };
}

function cutLine(raw: string, max: number): string {
  return raw.length > max ? `${raw.slice(0, max)}… [line truncated: ${raw.length - max} more characters]` : raw;
}

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
