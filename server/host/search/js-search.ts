import { promises as fs } from "node:fs";
import path from "node:path";
import { WorldlineError } from "../../errors";
import { sensitiveReason } from "../paths";
import { globMatcher, walkFiles, type WalkedFile } from "../walk";
import type { SearchLine, SearchOutcome, SearchRequest } from "./types";

/** Larger files are skipped by the JavaScript search; ripgrep would stream them, we would hold them in memory. */
const JS_SEARCH_MAX_FILE_BYTES = 20 * 1024 * 1024;
const BINARY_SNIFF_BYTES = 8192;

/** The fallback when `rg` is not on PATH: same semantics as the ripgrep back end, in process. */
export async function searchWithJavaScript(request: SearchRequest): Promise<SearchOutcome> {
  let regex: RegExp;
  try {
    regex = new RegExp(request.pattern, request.ignoreCase ? "iu" : "u");
  } catch {
    try {
      regex = new RegExp(request.pattern, request.ignoreCase ? "i" : "");
    } catch (error) {
      throw new WorldlineError("search:bad_pattern", `Invalid regular expression: ${(error as Error).message}`);
    }
  }
  const included = request.include.length > 0 ? globMatcher(request.include) : () => true;
  const excluded = globMatcher(request.exclude);
  const outcome: SearchOutcome = { files: [], matchCount: 0, truncated: false };

  for await (const file of candidateFiles(request.root, request.signal)) {
    if (!included(file.relative) || prefixes(file.relative).some(excluded)) continue;
    const lines = await readTextLines(file.absolute);
    if (!lines) continue;
    const found = searchLines(lines, regex, request.contextLines, request.maxMatches - outcome.matchCount);
    if (found.matches > 0) {
      outcome.files.push({ absolute: file.absolute, lines: found.lines });
      outcome.matchCount += found.matches;
    }
    // A match past the cap (possibly in a later file) is how we know results were cut.
    if (found.more) {
      outcome.truncated = true;
      break;
    }
  }
  return outcome;
}

async function* candidateFiles(root: string, signal?: AbortSignal): AsyncGenerator<WalkedFile> {
  const stat = await fs.stat(root);
  if (stat.isFile()) {
    if (!sensitiveReason(root)) yield { absolute: root, relative: path.basename(root) };
    return;
  }
  yield* walkFiles(root, signal);
}

/** "a/b/c.ts" → ["a", "a/b", "a/b/c.ts"]: an excluded folder excludes what is in it, as in ripgrep. */
function prefixes(relative: string): string[] {
  const parts = relative.split("/");
  return parts.map((_, index) => parts.slice(0, index + 1).join("/"));
}

async function readTextLines(file: string): Promise<string[] | undefined> {
  // A file that vanished or cannot be read mid-search is skipped, not the whole search.
  const stat = await fs.stat(file).catch(() => undefined);
  if (!stat || stat.size > JS_SEARCH_MAX_FILE_BYTES) return undefined;
  const bytes = await fs.readFile(file).catch(() => undefined); // vanished or unreadable mid-search: skipped
  if (!bytes || bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return undefined;
  const lines = bytes.toString("utf8").split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

function searchLines(
  lines: string[],
  regex: RegExp,
  context: number,
  budget: number,
): { lines: SearchLine[]; matches: number; more: boolean } {
  const keep = new Map<number, boolean>();
  let matches = 0;
  let more = false;
  for (let index = 0; index < lines.length; index++) {
    if (!regex.test(lines[index])) continue;
    if (matches >= budget) {
      more = true;
      break;
    }
    matches++;
    keep.set(index, true);
    for (let c = Math.max(0, index - context); c <= Math.min(lines.length - 1, index + context); c++) {
      if (!keep.has(c)) keep.set(c, false);
    }
  }
  // Context after the last kept match may belong to a match past the budget; that is fine, ripgrep does the same.
  const result = [...keep.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([index, isMatch]) => ({ number: index + 1, text: lines[index], isMatch }));
  return { lines: result, matches, more };
}
