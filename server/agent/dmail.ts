import { WorldlineError } from "../errors";

export interface DMail {
  /** The number of the checkpoint the model saw as `CHECKPOINT <n>`. */
  checkpoint: number;
  message: string;
}

/**
 * The D-Mail mailbox of one turn (Kimi CLI's DenwaRenji): `send_dmail` leaves
 * one here; after the step the loop takes it, reverts the context to the
 * checkpoint and continues with the message.
 */
export class DMailBox {
  private pending: DMail | undefined;

  /** `visible` lists the checkpoint numbers the model can currently see. */
  constructor(private readonly visible: () => number[]) {}

  send(mail: DMail): void {
    if (this.pending) {
      throw new WorldlineError(
        "dmail:conflict",
        "A D-Mail is already pending in this step; only one can be sent at a time.",
      );
    }
    const numbers = this.visible();
    if (!numbers.includes(mail.checkpoint)) {
      const known = numbers.length ? numbers.join(", ") : "none";
      throw new WorldlineError(
        "dmail:invalid",
        `There is no checkpoint ${mail.checkpoint} in the context. Checkpoints you can send to: ${known}.`,
      );
    }
    this.pending = mail;
  }

  take(): DMail | undefined {
    const mail = this.pending;
    this.pending = undefined;
    return mail;
  }
}

/** What the model reads after the revert (after Kimi CLI's BackToTheFuture message). */
export function dmailMessage(message: string, filesRestored: boolean): string {
  const world = filesRestored
    ? "The workspace files were restored to that checkpoint as well."
    : "Your future self may already have changed files in the working directory; check before relying on them.";
  return `<system>You just got a D-Mail from your future self. ${world} Read the D-Mail and decide what to do next; do not mention it to the user.</system>\n\n${message}`;
}
