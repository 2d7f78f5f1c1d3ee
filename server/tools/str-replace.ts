import * as z from "zod";
import { WorldlineError } from "../errors";
import { defineTool } from "./define";
import { unifiedDiff } from "../diff";
import { withDiagnostics } from "./diagnostics-section";
import { hostOf } from "./host-of";
import { pathApproval } from "./paths";

const Edit = z.object({
  old_text: z
    .string()
    .describe(
      "Exact text to replace, including whitespace and indentation. Must occur exactly once unless replace_all is true; add surrounding lines to make it unique.",
    ),
  new_text: z.string().describe("Text to put in its place. Empty to delete old_text."),
  replace_all: z
    .boolean()
    .optional()
    .describe("Replace every occurrence of old_text instead of requiring exactly one."),
});

const StrReplaceParameters = z.object({
  path: z.string().describe("File to edit, relative to the workspace root."),
  edits: z
    .array(Edit)
    .min(1)
    .describe("One or more edits, applied in order to the file's text. Either all apply or none does."),
});

type Edit = z.infer<typeof Edit>;

export const strReplaceTool = defineTool({
  name: "str_replace",
  description:
    "Edit a file by replacing exact text. Each edit's old_text must match the file exactly (read the file first) and be unique unless replace_all is set. Several edits to one file go in one call.",
  parameters: StrReplaceParameters,
  async needsApproval(args, ctx) {
    const host = hostOf(ctx);
    const resolved = await host.resolve(ctx.cwd, args.path);
    const before = await host.readText(resolved.real);
    if (before === undefined) return pathApproval(resolved, "write", "Edit (file missing, will fail)");
    try {
      return pathApproval(
        resolved,
        "write",
        "Edit",
        unifiedDiff(resolved.display, before, applyEdits(before, args.edits)),
      );
    } catch {
      // Still ask: the file may change before the call runs and the edit then apply.
      return pathApproval(resolved, "write", "Edit (edits do not apply to the current file)");
    }
  },
  async execute(args, ctx) {
    const host = hostOf(ctx);
    const resolved = await host.resolve(ctx.cwd, args.path);
    const before = await host.readText(resolved.real);
    if (before === undefined) {
      return { isError: true, output: `File not found: ${resolved.display}. Use write_file to create a new file.` };
    }
    const after = applyEdits(before, args.edits);
    await host.writeResolved(resolved, after);
    const count = args.edits.length;
    return withDiagnostics(ctx, resolved, after, {
      isError: false,
      output: `Edited ${resolved.display} (${count} edit${count === 1 ? "" : "s"} applied).`,
      display: { path: resolved.display, diff: unifiedDiff(resolved.display, before, after) },
    });
  },
});

/** Applies the edits in order; throws a model-readable error naming the failing edit. */
export function applyEdits(content: string, edits: Edit[]): string {
  const crlf = content.includes("\r\n");
  let text = content;
  edits.forEach((edit, index) => {
    const label = edits.length > 1 ? `Edit ${index + 1}` : "The edit";
    if (edit.old_text === "")
      throw new WorldlineError(
        "fs:edit_failed",
        `${label} has an empty old_text; use write_file to create or overwrite a file.`,
      );
    if (edit.old_text === edit.new_text)
      throw new WorldlineError("fs:edit_failed", `${label} has identical old_text and new_text; nothing would change.`);
    let oldText = edit.old_text;
    let newText = edit.new_text;
    // Models write \n; a CRLF file still matches, and keeps its line endings.
    if (crlf && !text.includes(oldText) && text.includes(oldText.replace(/\r?\n/g, "\r\n"))) {
      oldText = oldText.replace(/\r?\n/g, "\r\n");
      newText = newText.replace(/\r?\n/g, "\r\n");
    }
    const positions = occurrences(text, oldText);
    if (positions.length === 0) {
      throw new WorldlineError(
        "fs:edit_failed",
        `${label}: old_text was not found in the file. It must match exactly, including whitespace and indentation; read the file again and copy the text. No edits were applied.`,
      );
    }
    if (positions.length > 1 && !edit.replace_all) {
      const lines = positions.map((p) => text.slice(0, p).split("\n").length).join(", ");
      throw new WorldlineError(
        "fs:edit_failed",
        `${label}: old_text occurs ${positions.length} times (lines ${lines}). Include more surrounding text to make it unique, or set replace_all. No edits were applied.`,
      );
    }
    text = edit.replace_all ? text.split(oldText).join(newText) : text.replace(oldText, () => newText);
  });
  return text;
}

function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) found.push(at);
  return found;
}
