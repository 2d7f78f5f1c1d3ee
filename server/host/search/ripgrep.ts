import { spawn } from "node:child_process";
import { accessSync, constants, promises as fs } from "node:fs";
import path from "node:path";
import { WorldlineError } from "../../errors";
import { skipGlobsForRipgrep } from "../../ignore";
import { sensitiveReason } from "../paths";
import type { FileMatches, SearchOutcome, SearchRequest } from "./types";

/** Same limit as the JavaScript back end, so both search the same files. */
const RG_MAX_FILESIZE = "20M";
/** The workspace skip list, as walk.ts applies it; ripgrep would otherwise search them when no .gitignore lists them. */
const SKIPPED_GLOBS = skipGlobsForRipgrep();

/** The `rg` executable on PATH, or undefined. */
export function findRipgrep(envPath: string | undefined = process.env.PATH): string | undefined {
  for (const dir of (envPath ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, "rg");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not in this PATH entry; keep looking.
    }
  }
  return undefined;
}

type RgText = { text: string } | { bytes: string };
type RgMessage =
  | { type: "match" | "context"; data: { path: RgText; lines: RgText; line_number: number } }
  | { type: "begin" | "end" | "summary"; data: unknown };

/** Runs ripgrep with --json and returns the same shape as the JavaScript search. */
export async function searchWithRipgrep(rg: string, request: SearchRequest): Promise<SearchOutcome> {
  const stat = await fs.stat(request.root);
  const cwd = stat.isFile() ? path.dirname(request.root) : request.root;
  const target = stat.isFile() ? path.basename(request.root) : "./";
  const args = ["--json", "--hidden", "--no-require-git", "--sort", "path", "--max-filesize", RG_MAX_FILESIZE];
  if (request.ignoreCase) args.push("--ignore-case");
  if (request.contextLines > 0) args.push("--context", String(request.contextLines));
  for (const glob of request.include) args.push("--glob", glob);
  for (const glob of request.exclude) args.push("--glob", `!${glob}`);
  for (const glob of SKIPPED_GLOBS) args.push("--glob", glob);
  args.push("--regexp", request.pattern, "--", target);

  const child = spawn(rg, args, { cwd, stdio: ["ignore", "pipe", "pipe"], signal: request.signal });
  const outcome: SearchOutcome = { files: [], matchCount: 0, truncated: false };
  const byPath = new Map<string, FileMatches>();
  let stderr = "";
  let pending = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });

  const handleLine = (line: string) => {
    if (outcome.truncated || line === "") return;
    const message = JSON.parse(line) as RgMessage;
    if (message.type !== "match" && message.type !== "context") return;
    const { data } = message;
    const absolute = path.resolve(cwd, decode(data.path));
    if (sensitiveReason(absolute)) return;
    const isMatch = message.type === "match";
    if (isMatch && outcome.matchCount >= request.maxMatches) {
      outcome.truncated = true;
      child.kill();
      return;
    }
    let file = byPath.get(absolute);
    if (!file) {
      file = { absolute, lines: [] };
      byPath.set(absolute, file);
      outcome.files.push(file);
    }
    file.lines.push({ number: data.line_number, text: decode(data.lines).replace(/\r?\n$/, ""), isMatch });
    if (isMatch) outcome.matchCount++;
  };

  const exitCode = await new Promise<number | null>((resolve, reject) => {
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      pending += chunk;
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      lines.forEach(handleLine);
    });
    child.on("error", reject);
    child.on("close", (code) => resolve(code));
  });
  handleLine(pending);
  if (!outcome.truncated && exitCode === 2 && outcome.matchCount === 0) {
    throw new WorldlineError("search:failed", `ripgrep failed: ${stderr.trim().split("\n").slice(-3).join(" ")}`);
  }
  if (outcome.truncated) dropContextOfDroppedMatch(outcome, request.contextLines);
  return outcome;
}

function decode(value: RgText): string {
  return "text" in value ? value.text : Buffer.from(value.bytes, "base64").toString("utf8");
}

/**
 * ripgrep streams the context before a match we then dropped for the cap; the
 * JavaScript search never collects it. Trim it so both print the same.
 */
function dropContextOfDroppedMatch(outcome: SearchOutcome, contextLines: number): void {
  outcome.files = outcome.files.filter((file) => file.lines.some((line) => line.isMatch));
  const last = outcome.files[outcome.files.length - 1];
  if (!last) return;
  const lastMatch = Math.max(...last.lines.filter((line) => line.isMatch).map((line) => line.number));
  last.lines = last.lines.filter((line) => line.number <= lastMatch + contextLines);
}
