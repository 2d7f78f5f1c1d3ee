import type { ApprovalGate } from "../agent";

/**
 * The gate before the durable queue exists: safe calls pass, yolo passes what
 * stays inside the workspace, everything else is refused with a clear reason.
 */
export function createBasicGate(isYolo: (sessionId: string) => Promise<boolean>): ApprovalGate {
  return {
    async check({ need, sessionId }) {
      if (need.level === "none") return { approved: true };
      if (need.level === "ask" && (await isYolo(sessionId))) return { approved: true };
      return { approved: false, feedback: `This needs a human approval (${need.description}), and no approver is available.` };
    },
  };
}
