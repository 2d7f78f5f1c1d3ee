import * as z from "zod";

/** One error a language server found in a file (server/diagnostics), lines and columns from 1. */
export const FileDiagnosticView = z.object({
  line: z.number().int(),
  column: z.number().int(),
  message: z.string(),
  source: z.string().optional(),
  code: z.string().optional(),
});
export type FileDiagnosticView = z.infer<typeof FileDiagnosticView>;

/** `GET /api/v1/sessions/:id/diagnostics?path=`: the errors last published for a file; null when no server has it open. */
export const FileDiagnosticsQuery = z.object({ path: z.string().min(1).max(4_096) });
export const FileDiagnostics = z.object({ path: z.string(), diagnostics: z.array(FileDiagnosticView).nullable() });
export type FileDiagnostics = z.infer<typeof FileDiagnostics>;

/** `GET /api/v1/diagnostics`: each language server's state, and why one gives no diagnostics (Settings). */
export const LanguageServerStatus = z.object({
  workspace: z.string(),
  language: z.string(),
  state: z.enum(["running", "unavailable"]),
  note: z.string().optional(),
  at: z.string(),
});
export type LanguageServerStatus = z.infer<typeof LanguageServerStatus>;
