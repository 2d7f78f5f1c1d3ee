import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
// Not the folder's index: that loads the ACP SDK, which print mode does not speak.
import { driveTurn, errorLine, isRetryableError, type TurnSummary } from "../acp/turn";
import { preloadOpenAI } from "../agent";
import { loadConfig } from "../config";
import { errorMessage } from "../errors";
import { startHeadless } from "../bridge";
import type { EventEnvelope } from "../protocol";

/** Exit codes of print mode (README.md, Command line); 75 is sysexits' EX_TEMPFAIL: try again later. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_RETRYABLE = 75;
const EXIT_USAGE = 2;

type OutputFormat = "text" | "stream-json";

interface RunOptions {
  prompt: string;
  cwd: string;
  yolo: boolean;
  model?: string;
  format: OutputFormat;
  finalMessageOnly: boolean;
}

/**
 * `worldline run -p "<prompt>"`: one turn, no questions. Output on stdout
 * (text or JSON lines), diagnostics on stderr. Without --yolo, whatever needs
 * an approval is refused with feedback the model sees, a line on stderr, and
 * exit code 1 at the end: the task was not done as asked.
 */
export async function runCommand(argv: string[]): Promise<number> {
  const parsed = await parseRunArgs(argv);
  if (typeof parsed === "string") {
    process.stderr.write(`${parsed}\n`);
    return EXIT_USAGE;
  }
  const config = loadConfig({ ...process.env, PORT: "0" });
  // The turn's first request needs the SDK: load it while the bridge starts.
  preloadOpenAI();
  const bridge = await startHeadless({ config, kind: "run", sealEnvironment: true });
  const services = bridge.services;
  try {
    const session = await services.sessions.create({
      workspace: parsed.cwd,
      yolo: parsed.yolo,
      model: parsed.model,
      title: parsed.prompt.slice(0, 60),
    });
    const output = new PrintOutput(parsed);
    let refused = 0;
    const onSigint = () => void services.turns.cancel(session.id);
    process.once("SIGINT", onSigint);
    const summary: TurnSummary = await driveTurn(services, session.id, parsed.prompt, async (event) => {
      if (event.type === "approval.requested") {
        // Nobody can answer here: refuse at once, with a reason the model can act on.
        refused++;
        process.stderr.write(
          `[worldline] refused (needs approval; re-run with --yolo to allow it): ${event.payload.description}\n`,
        );
        await services.approvals
          .decide(event.payload.approvalId, {
            decision: "reject",
            feedback:
              "Print mode cannot ask a human for approval. Do without this action, or tell the user to re-run with --yolo.",
            decidedBy: "print-mode",
          })
          .catch(() => undefined); // decided elsewhere first
      } else if (event.type === "tool.state" && event.payload.display?.rejected === true && !parsed.yolo) {
        refused++;
      }
      output.event(event);
    });
    process.off("SIGINT", onSigint);
    output.end(summary, session.id);
    if (summary.outcome === "error") {
      const failure = summary.error ?? { code: "agent:internal", message: summary.message ?? "The turn failed." };
      process.stderr.write(`${errorLine(failure)}\n`);
      return isRetryableError(failure.code) ? EXIT_RETRYABLE : EXIT_FAILURE;
    }
    if (summary.outcome !== "completed") {
      process.stderr.write(
        `[worldline] the turn ended: ${summary.outcome}${summary.message ? ` (${summary.message})` : ""}\n`,
      );
      return EXIT_FAILURE;
    }
    if (refused > 0) {
      process.stderr.write(
        `[worldline] ${refused} action(s) needed an approval and were refused; re-run with --yolo to allow them.\n`,
      );
      return EXIT_FAILURE;
    }
    return EXIT_OK;
  } finally {
    await bridge
      .close()
      .catch((error: unknown) => process.stderr.write(`[worldline] shutdown: ${errorMessage(error)}\n`));
  }
}

async function parseRunArgs(argv: string[]): Promise<RunOptions | string> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        prompt: { type: "string", short: "p" },
        cwd: { type: "string" },
        yolo: { type: "boolean", default: false },
        model: { type: "string" },
        "output-format": { type: "string", default: "text" },
        "final-message-only": { type: "boolean", default: false },
      },
      strict: true,
    }));
  } catch (error) {
    return errorMessage(error);
  }
  const format = values["output-format"];
  if (format !== "text" && format !== "stream-json")
    return `--output-format must be text or stream-json, got "${format}".`;
  let prompt = values.prompt;
  if (prompt === undefined && !process.stdin.isTTY) prompt = await readStdin();
  if (!prompt?.trim()) return 'No prompt: pass -p "<prompt>" or pipe it on stdin.';
  const cwd = path.resolve(values.cwd ?? ".");
  if (!fs.existsSync(cwd)) return `--cwd: the folder "${cwd}" does not exist.`;
  return {
    prompt: prompt.trim(),
    cwd,
    yolo: values.yolo ?? false,
    model: values.model,
    format,
    finalMessageOnly: values["final-message-only"] ?? false,
  };
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

interface PendingMessage {
  content: string;
  toolCalls: { id: string; type: "function"; function: { name: string; arguments: string } }[];
}

/**
 * Writes a turn to stdout. text: the assistant's words as they stream (tool
 * activity on stderr). stream-json: one JSON object per line in the OpenAI
 * message shape: assistant messages (with their tool_calls), then tool results.
 */
class PrintOutput {
  private pending: PendingMessage = { content: "", toolCalls: [] };
  private lastAssistantText = "";
  private streamedText = false;

  constructor(private readonly options: RunOptions) {}

  event(event: EventEnvelope): void {
    switch (event.type) {
      case "message.part.delta":
        if (event.payload.part !== "text") return;
        this.pending.content += event.payload.delta;
        if (this.options.format === "text" && !this.options.finalMessageOnly) {
          process.stdout.write(event.payload.delta);
          this.streamedText = true;
        }
        return;
      case "tool.call":
        this.pending.toolCalls.push({
          id: event.payload.toolCallId,
          type: "function",
          function: { name: event.payload.name, arguments: JSON.stringify(event.payload.args ?? {}) },
        });
        if (this.options.format === "text")
          process.stderr.write(`\n[tool] ${event.payload.name} ${JSON.stringify(event.payload.args ?? {})}\n`);
        return;
      case "tool.state":
        if (event.payload.state !== "completed" && event.payload.state !== "error") return;
        this.flush();
        if (this.options.format === "stream-json" && !this.options.finalMessageOnly) {
          this.line({
            role: "tool",
            tool_call_id: event.payload.toolCallId,
            content: event.payload.output ?? "",
            is_error: event.payload.isError ?? false,
          });
        }
        return;
      case "turn.stage":
        if (event.payload.stage === "planning") this.flush();
        return;
      case "turn.retry":
        process.stderr.write(
          `[worldline] retrying (attempt ${event.payload.attempt}) in ${Math.round(event.payload.delayMs)} ms: ${event.payload.message}\n`,
        );
        return;
      default:
        return;
    }
  }

  end(summary: TurnSummary, sessionId: string): void {
    this.flush();
    if (this.options.finalMessageOnly) {
      if (this.options.format === "stream-json") this.line({ role: "assistant", content: this.lastAssistantText });
      else process.stdout.write(`${this.lastAssistantText}\n`);
      return;
    }
    if (this.options.format === "text") {
      if (this.streamedText) process.stdout.write("\n");
      return;
    }
    this.line({
      type: "result",
      session_id: sessionId,
      outcome: summary.outcome,
      usage: summary.usage,
      error: summary.error,
    });
  }

  private flush(): void {
    const { content, toolCalls } = this.pending;
    if (!content && toolCalls.length === 0) return;
    this.pending = { content: "", toolCalls: [] };
    if (content) this.lastAssistantText = content;
    if (this.options.format === "stream-json" && !this.options.finalMessageOnly) {
      this.line({ role: "assistant", content, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) });
    }
  }

  private line(value: unknown): void {
    process.stdout.write(`${JSON.stringify(value)}\n`);
  }
}
