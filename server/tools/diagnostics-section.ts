import type { ToolContext, ToolResult } from "./types";

/** Errors shown per edit: enough to fix, few enough not to drown the result (as opencode does). */
export const MAX_DIAGNOSTICS = 20;

/**
 * An edit's result with the language server's errors in the file after it, in a section of its
 * own below the statement that the edit was applied: the model must not take them for a failed edit.
 */
export async function withDiagnostics(
  ctx: ToolContext,
  file: { real: string; display: string },
  text: string,
  result: ToolResult,
): Promise<ToolResult> {
  if (!ctx.diagnose) return result;
  const errors = await ctx.diagnose(file.real, text).catch(() => undefined);
  if (!errors) return result;
  const display = { ...result.display, diagnostics: errors.slice(0, MAX_DIAGNOSTICS), diagnosticsTotal: errors.length };
  if (errors.length === 0) return { ...result, display };
  const shown = errors.slice(0, MAX_DIAGNOSTICS).map((error) => {
    const code = error.code ? ` ${error.source ?? ""}${error.code}` : "";
    return `${file.display}:${error.line}:${error.column}: error${code}: ${error.message}`;
  });
  const more = errors.length > MAX_DIAGNOSTICS ? [`… and ${errors.length - MAX_DIAGNOSTICS} more`] : [];
  const section = [
    "",
    `Diagnostics (not an edit failure; the edit above was applied): the language server reports ${errors.length} error${errors.length === 1 ? "" : "s"} in ${file.display} now:`,
    ...shown,
    ...more,
  ].join("\n");
  return { ...result, output: `${result.output}\n${section}`, display };
}
