import * as acp from "@agentclientprotocol/sdk";
import * as z from "zod";
import type { AgentTool } from "../agent";
import { unifiedDiff } from "../diff";
import { errorMessage } from "../errors";
import {
  auditCommand,
  classifyCommand,
  DEFAULT_SHELL_TIMEOUT_MS as DEFAULT_TIMEOUT_MS,
  defineTool,
  MAX_SHELL_TIMEOUT_MS as MAX_TIMEOUT_MS,
  NON_INTERACTIVE_ENV,
  READ_DEFAULT_LIMIT,
  READ_MAX_LINE_CHARS,
  READ_MAX_OUTPUT_CHARS,
  type ApprovalNeed,
  type ToolContext,
  type ToolResult,
} from "../tools";
import type { ToolHost } from "../host";
import { hostOf } from "../tools/host-of";
import { applyEdits } from "../tools/str-replace";

/** Output the client keeps for a command (it truncates from the start). */
const TERMINAL_OUTPUT_BYTES = 120_000;
/** A terminal whose prompt never ends (a turn started from the web UI) is released after this. */
const RELEASE_FALLBACK_MS = 60_000;

export interface ClientToolsInput {
  client: acp.AgentContext;
  sessionId: string;
  capabilities: acp.ClientCapabilities;
}

/**
 * When the ACP client advertises fs or terminal capabilities, the session's
 * read_file, write_file, str_replace and shell go through it (`fs/*`,
 * `terminal/*`): an editor then sees unsaved buffers, records edits in its
 * undo history, and shows commands in its own terminals. Approvals are
 * unchanged: each replacement asks exactly what the local tool would.
 */
export class ClientTools {
  private readonly terminals = new Set<string>();

  constructor(private readonly input: ClientToolsInput) {}

  /** True when the client offers anything this replaces. */
  get active(): boolean {
    const { fs: files, terminal } = this.input.capabilities;
    return Boolean(files?.readTextFile || files?.writeTextFile || terminal);
  }

  /** Replacements for the tools of `current` it covers (names, descriptions, schemas and approval needs are kept). */
  tools(current: readonly AgentTool[]): AgentTool[] {
    const { fs: files, terminal } = this.input.capabilities;
    const base = (name: string) => current.find((tool) => tool.name === name);
    const tools: AgentTool[] = [];
    const read = base("read_file");
    if (files?.readTextFile && read) tools.push(this.readFile(read));
    const write = base("write_file");
    if (files?.writeTextFile && write) tools.push(this.writeFile(write));
    const edit = base("str_replace");
    if (files?.writeTextFile && edit) tools.push(this.strReplace(edit));
    const shell = base("shell");
    if (terminal && shell) tools.push(this.shell(shell));
    return tools;
  }

  /** Releases the terminals of finished commands (after their last update reached the client). */
  async releaseTerminals(): Promise<void> {
    const ids = [...this.terminals];
    this.terminals.clear();
    await Promise.all(ids.map((terminalId) => this.release(terminalId)));
  }

  private async release(terminalId: string): Promise<void> {
    await this.input.client
      .request(acp.methods.client.terminal.release, { sessionId: this.input.sessionId, terminalId })
      // Released already, or the client is gone: nothing is left to free.
      .catch(() => undefined);
  }

  private async readText(path: string, line?: number, limit?: number): Promise<string> {
    const response = await this.input.client.request(acp.methods.client.fs.readTextFile, {
      sessionId: this.input.sessionId,
      path,
      line: line ?? null,
      limit: limit ?? null,
    });
    return response.content;
  }

  private async writeText(path: string, content: string): Promise<void> {
    await this.input.client.request(acp.methods.client.fs.writeTextFile, {
      sessionId: this.input.sessionId,
      path,
      content,
    });
  }

  private readFile(base: AgentTool): AgentTool {
    const parameters = z.object({
      path: z.string(),
      offset: z.number().int().min(1).optional(),
      limit: z.number().int().min(1).optional(),
    });
    return replace(base, parameters, async (args, ctx) => {
      const resolved = await hostOf(ctx).resolve(ctx.cwd, args.path);
      const offset = args.offset ?? 1;
      const limit = args.limit ?? READ_DEFAULT_LIMIT;
      let text: string;
      try {
        // One line more than asked tells whether the file goes on.
        text = await this.readText(resolved.real, offset, limit + 1);
      } catch (error) {
        return {
          isError: true,
          output: `Could not read ${resolved.display} through the editor: ${clientError(error)}`,
        };
      }
      if (text === "" && offset === 1) return `${resolved.display} is empty.`;
      const lines = text.replace(/\n$/, "").split("\n");
      if (text === "") return { isError: true, output: `${resolved.display}: offset ${offset} is past the end.` };
      const more = lines.length > limit;
      return formatLines(lines.slice(0, limit), offset, resolved.display, more);
    });
  }

  private writeFile(base: AgentTool): AgentTool {
    const parameters = z.object({ path: z.string(), content: z.string() });
    return replace(
      base,
      parameters,
      async (args, ctx) => {
        const resolved = await hostOf(ctx).resolve(ctx.cwd, args.path);
        const before = await this.currentText(hostOf(ctx), resolved.real);
        try {
          await this.writeText(resolved.real, args.content);
        } catch (error) {
          return {
            isError: true,
            output: `Could not write ${resolved.display} through the editor: ${clientError(error)}`,
          };
        }
        return {
          isError: false,
          output: `${before === undefined ? "Created" : "Overwrote"} ${resolved.display} (${Buffer.byteLength(args.content, "utf8")} bytes).`,
          display: { path: resolved.display, diff: unifiedDiff(resolved.display, before ?? "", args.content) },
        };
      },
      false,
      async (args, need, ctx) => {
        const resolved = await hostOf(ctx).resolve(ctx.cwd, args.path);
        const before = await this.currentText(hostOf(ctx), resolved.real);
        return { ...need, diff: unifiedDiff(resolved.display, before ?? "", args.content) };
      },
    );
  }

  private strReplace(base: AgentTool): AgentTool {
    const edit = z.object({ old_text: z.string(), new_text: z.string(), replace_all: z.boolean().optional() });
    const parameters = z.object({ path: z.string(), edits: z.array(edit).min(1) });
    return replace(
      base,
      parameters,
      async (args, ctx) => {
        const resolved = await hostOf(ctx).resolve(ctx.cwd, args.path);
        const before = await this.currentText(hostOf(ctx), resolved.real);
        if (before === undefined)
          return { isError: true, output: `File not found: ${resolved.display}. Use write_file to create a new file.` };
        const after = applyEdits(before, args.edits);
        try {
          await this.writeText(resolved.real, after);
        } catch (error) {
          return {
            isError: true,
            output: `Could not write ${resolved.display} through the editor: ${clientError(error)}`,
          };
        }
        const count = args.edits.length;
        return {
          isError: false,
          output: `Edited ${resolved.display} (${count} edit${count === 1 ? "" : "s"} applied).`,
          display: { path: resolved.display, diff: unifiedDiff(resolved.display, before, after) },
        };
      },
      false,
      async (args, need, ctx) => {
        // The local tool checked the disk; the edit applies to what the editor has.
        const resolved = await hostOf(ctx).resolve(ctx.cwd, args.path);
        const before = await this.currentText(hostOf(ctx), resolved.real);
        if (before === undefined) return need;
        const diff = unifiedDiff(resolved.display, before, applyEdits(before, args.edits));
        return { ...need, diff, description: need.description.replace(/^Edit \([^)]*\)/, "Edit") };
      },
    );
  }

  /** The file as the editor has it (unsaved changes included) when it can read, else from disk; undefined when missing. */
  private async currentText(host: ToolHost, file: string): Promise<string | undefined> {
    if (this.input.capabilities.fs?.readTextFile) {
      try {
        return await this.readText(file);
      } catch {
        // Clients answer a missing file with an error; a real failure shows up at the write.
      }
    }
    return host.readText(file); // undefined for a new file: its diff starts from nothing
  }

  private shell(base: AgentTool): AgentTool {
    const parameters = z.object({
      command: z.string().min(1),
      timeout_seconds: z
        .number()
        .positive()
        .max(MAX_TIMEOUT_MS / 1000)
        .optional(),
      background: z.boolean().optional(),
    });
    return replace(
      base,
      parameters,
      async (args, ctx, raw) => {
        const classification = await classifyCommand(args.command);
        // Background tasks (task_output / task_stop) and sudo's password on stdin need the local shell.
        if (args.background || classification.usesSudo) return base.run(raw, ctx);
        const started = Date.now();
        const timeoutMs = Math.min((args.timeout_seconds ?? DEFAULT_TIMEOUT_MS / 1000) * 1000, MAX_TIMEOUT_MS);
        const { sessionId, client } = this.input;
        let terminalId: string;
        try {
          ({ terminalId } = await client.request(acp.methods.client.terminal.create, {
            sessionId,
            command: "bash",
            args: ["-c", args.command],
            cwd: ctx.cwd,
            env: Object.entries(NON_INTERACTIVE_ENV).map(([name, value]) => ({ name, value })),
            outputByteLimit: TERMINAL_OUTPUT_BYTES,
          }));
        } catch (error) {
          return { isError: true, output: `The editor could not start the command: ${clientError(error)}` };
        }
        this.terminals.add(terminalId);
        setTimeout(() => {
          if (this.terminals.delete(terminalId)) void this.release(terminalId);
        }, RELEASE_FALLBACK_MS + timeoutMs).unref();

        let ending: "timeout" | "cancel" | undefined;
        let timer: NodeJS.Timeout | undefined;
        const stopped = new Promise<void>((resolve) => {
          timer = setTimeout(() => {
            ending ??= "timeout";
            resolve();
          }, timeoutMs);
          const onAbort = () => {
            ending ??= "cancel";
            resolve();
          };
          if (ctx.signal.aborted) onAbort();
          else ctx.signal.addEventListener("abort", onAbort, { once: true });
        });
        let exit: { exitCode?: number | null; signal?: string | null } | undefined;
        try {
          exit = await Promise.race([
            client.request(acp.methods.client.terminal.waitForExit, { sessionId, terminalId }),
            stopped.then(() => undefined),
          ]);
          if (!exit)
            // It may have exited meanwhile; the output read next says how.
            await client.request(acp.methods.client.terminal.kill, { sessionId, terminalId }).catch(() => undefined);
          const output = await client.request(acp.methods.client.terminal.output, { sessionId, terminalId });
          exit ??= output.exitStatus ?? undefined;
          const exitCode = exit?.exitCode ?? null;
          await auditCommand(ctx, args.command, classification, exitCode, Date.now() - started);
          const notes: string[] = [];
          if (output.truncated) notes.push("[the beginning of the output was cut]");
          if (ending === "timeout")
            notes.push(`[timed out after ${Math.round(timeoutMs / 1000)}s; the command was killed]`);
          else if (ending === "cancel") notes.push("[cancelled; the command was killed]");
          notes.push(exitCode !== null ? `[exit code: ${exitCode}]` : `[killed by ${exit?.signal ?? "a signal"}]`);
          const text = output.output.replace(/\n$/, "");
          return {
            isError: ending !== undefined || exitCode !== 0,
            output: `${text === "" ? "(no output)" : text}\n${notes.join("\n")}`,
            display: { acpTerminalId: terminalId },
          };
        } catch (error) {
          return { isError: true, output: `The command failed in the editor's terminal: ${clientError(error)}` };
        } finally {
          clearTimeout(timer);
        }
      },
      // Bounds its own time and kills the command on cancel.
      true,
    );
  }
}

/** A tool like `base` (same name, description, schema and approvals) that runs `execute` instead. */
function replace<A>(
  base: AgentTool,
  parameters: z.ZodType<A>,
  execute: (args: A, ctx: ToolContext, raw: string) => Promise<ToolResult | string>,
  ownsCancellation = false,
  /** Adjusts what the gate shows (a diff against the editor's buffer); never loosens the level. */
  adjustNeed?: (args: A, need: ApprovalNeed, ctx: ToolContext) => Promise<ApprovalNeed>,
): AgentTool {
  return {
    name: base.name,
    description: base.description,
    jsonSchema: base.jsonSchema,
    async needsApproval(raw, ctx) {
      const need = await base.needsApproval(raw, ctx);
      const parsed = parameters.safeParse(safeJson(raw));
      if (!adjustNeed || !parsed.success) return need;
      // A refinement that fails keeps the base tool's verdict.
      const adjusted = await adjustNeed(parsed.data, need, ctx).catch(() => need);
      return { ...adjusted, level: need.level, subject: need.subject, scope: need.scope, risk: need.risk };
    },
    // Validation, output caps and timeouts as for any tool; the raw arguments go along for a local fallback.
    run: (raw, ctx) =>
      defineTool({
        name: base.name,
        description: base.description,
        parameters,
        execute: (args, c) => execute(args as A, c, raw),
        ownsCancellation,
      }).run(raw, ctx),
  };
}

function safeJson(raw: string): unknown {
  try {
    return raw ? JSON.parse(raw) : {};
  } catch {
    // not JSON: the tool's own validation answers it
    return undefined;
  }
}

function formatLines(lines: string[], offset: number, display: string, more: boolean): string {
  const out: string[] = [];
  let chars = 0;
  for (const raw of lines) {
    const line =
      raw.length > READ_MAX_LINE_CHARS
        ? `${raw.slice(0, READ_MAX_LINE_CHARS)}… [line truncated: ${raw.length - READ_MAX_LINE_CHARS} more characters]`
        : raw;
    const numbered = `${String(offset + out.length).padStart(6)}\t${line}`;
    if (chars + numbered.length + 1 > READ_MAX_OUTPUT_CHARS && out.length > 0) {
      more = true;
      break;
    }
    out.push(numbered);
    chars += numbered.length + 1;
  }
  const last = offset + out.length - 1;
  return more
    ? `${out.join("\n")}\n[showing lines ${offset}-${last}; call read_file with offset=${last + 1} to continue]`
    : out.join("\n");
}

function clientError(error: unknown): string {
  if (error && typeof error === "object" && "message" in error) return String((error as { message: unknown }).message);
  return errorMessage(error);
}
