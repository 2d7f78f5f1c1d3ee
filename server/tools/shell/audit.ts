import { errorMessage } from "../../errors";
import { redactSecrets } from "../../secrets/redact";
import type { ToolContext } from "../types";
import type { CommandClassification } from "./classify";

/**
 * Writes a command that ran to the audit log (redacted), with who approved it. Used by the
 * shell tool and by an ACP client's terminal (server/acp/client-tools.ts); a rejected command
 * is written by the tool runner (server/agent/tool-runner.ts), since it never reaches the tool.
 */
export async function auditCommand(
  ctx: ToolContext,
  command: string,
  classification: Pick<CommandClassification, "risk" | "actionType">,
  exitCode: number | null,
  durationMs: number,
): Promise<void> {
  if (!ctx.audit) return;
  try {
    await ctx.audit({
      command: redactSecrets(command),
      cwd: ctx.cwd,
      riskLevel: classification.risk,
      actionType: classification.actionType,
      approved: true,
      decidedBy: ctx.approvedBy,
      exitCode,
      durationMs,
    });
  } catch (error) {
    // A failing audit store must not turn a finished command into a failure; the bridge logs it.
    console.error(`audit record failed: ${errorMessage(error)}`);
  }
}
