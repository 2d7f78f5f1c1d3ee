import * as z from "zod";
import { defineTool, type Tool } from "../../tools";
import type { DMailBox } from "../dmail";

/** Module-level, so its JSON Schema is converted once, not at every turn (server/tools/define.ts caches by schema). */
const SendDmailParameters = z.object({
  checkpoint_id: z.number().int().min(0).describe("The number n of a `CHECKPOINT n` marker you can see."),
  message: z.string().min(1).max(20_000).describe("What your past self must know: findings, the plan, what to avoid."),
});

export function createSendDmailTool(box: DMailBox): Tool {
  return defineTool({
    name: "send_dmail",
    description: [
      "Send a message to your past self at an earlier checkpoint, like a D-Mail in Steins;Gate.",
      "User messages and tool results end (or start) with markers `<system>CHECKPOINT n</system>`; pick one n as checkpoint_id.",
      "After this step the conversation is reverted to that checkpoint: everything after it disappears from your context and your message is appended instead.",
      "Use it to drop a dead end or a huge tool output while keeping what you learned: say clearly what you found, what to do and what to avoid, because your past self knows nothing of what happened after the checkpoint.",
      "Only one D-Mail can be pending at a time. Files changed after the checkpoint may or may not be restored; you will be told.",
    ].join(" "),
    parameters: SendDmailParameters,
    needsApproval: () => ({
      level: "none",
      subject: "send_dmail",
      scope: "send_dmail",
      description: "Revert the conversation to a checkpoint",
      risk: "none",
    }),
    async execute({ checkpoint_id, message }) {
      box.send({ checkpoint: checkpoint_id, message });
      return `D-Mail queued: after this step the conversation goes back to checkpoint ${checkpoint_id} and continues with your message.`;
    },
  });
}
