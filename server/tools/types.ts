import type * as z from "zod";
import type { ToolHost } from "../host";

/** How risky a call is, for badges and rules. */
export type RiskLevel = "none" | "low" | "medium" | "high";

/**
 * What the approval gate needs to know about one call. Tools compute it from
 * their validated arguments; the gate (server/approvals) applies rules → yolo → ask.
 * - `none`: safe (reads inside the workspace); runs unless a rule denies or asks.
 * - `ask`: risky; yolo or an allow rule may approve it.
 * - `always`: outside the workspace or a sensitive file; yolo never approves it,
 *   only an explicit allow rule or a human.
 */
export interface ApprovalNeed {
  level: "none" | "ask" | "always";
  /** What rules match against: the command line, or the workspace-relative (or absolute, if outside) path. */
  subject: string;
  /** The pattern that "allow for this session" records, e.g. `git status*` or `src/**`. */
  scope: string;
  /** One line a human reads in the approval card. */
  description: string;
  risk: RiskLevel;
  /** For shell commands: read_only, package_check, package_install, file_write, file_delete, network, privileged, … */
  actionType?: string;
  /** For edits: the unified diff that would be applied. */
  diff?: string;
  /**
   * True for shell lines that chain, pipe, substitute or redirect: a wildcard
   * rule (`git status*`) must not approve them (`git status; rm -rf ~`); only
   * an exact match may.
   */
  compound?: boolean;
  /** The command line of a shell call: a rejected one is written to the audit log with who rejected it. */
  auditedCommand?: string;
}

export interface ApprovalDecision {
  approved: boolean;
  /** Feedback from a human who rejected with a note; the model sees it. */
  feedback?: string;
  /** The rule or person that decided (`rule: session deny shell rm *`, `yolo`, `web`), for the audit log. */
  decidedBy?: string;
}

/** Events a tool may stream while it runs (output chunks, progress). */
export type ToolProgress = { kind: "output"; text: string } | { kind: "status"; text: string };

/** Everything a tool may touch the world through; tests pass a fake. */
export interface ToolContext {
  /** The workspace root, already realpath'd (a path on the host's machine). */
  cwd: string;
  /** Where the workspace is: a runner's host, or this machine when absent. */
  host?: ToolHost;
  signal: AbortSignal;
  sessionId: string;
  turnId?: string;
  toolCallId: string;
  /** Asks a human something mid-call (used by sudo for the password). */
  askPassword?: (prompt: string) => Promise<string | null>;
  emit: (progress: ToolProgress) => void;
  /** Records a shell command in the audit log. */
  audit?: (record: AuditRecord) => Promise<void>;
  /** Who approved this call (ApprovalDecision.decidedBy), for the audit record of what it runs. */
  approvedBy?: string;
  /**
   * A language server's errors in a file just written with this text (server/diagnostics);
   * undefined when no server handles it or none answered in time. Never throws.
   */
  diagnose?: (file: string, text: string) => Promise<FileDiagnostic[] | undefined>;
}

/** One error a language server found in a file, lines and columns from 1. */
export interface FileDiagnostic {
  line: number;
  column: number;
  message: string;
  /** `ts`, `Pyright`, … */
  source?: string;
  code?: string;
}

export interface AuditRecord {
  command: string;
  cwd: string;
  riskLevel: RiskLevel;
  actionType: string;
  approved: boolean;
  /** The rule or person that approved or rejected the command. */
  decidedBy?: string;
  exitCode?: number | null;
  durationMs?: number;
}

/** What a tool returns; `output` is what the model reads. */
export interface ToolResult {
  output: string;
  isError: boolean;
  /** Structured extras for the UI (a diff, a todo list, …); never sent to the model. */
  display?: Record<string, unknown>;
  /** Images for the model (`data:` URLs within the prompt image limits), sent after the tool results; never in the event log. */
  images?: string[];
}

export interface ToolDefinition<P extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  parameters: P;
  needsApproval?: (args: z.infer<P>, ctx: ToolContext) => Promise<ApprovalNeed> | ApprovalNeed;
  execute: (args: z.infer<P>, ctx: ToolContext) => Promise<ToolResult | string>;
}
