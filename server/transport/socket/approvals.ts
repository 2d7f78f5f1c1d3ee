import type { Socket } from "socket.io";
import { approvalCommands, type ApprovalView } from "../../protocol";
import type { BridgeServices } from "../services";
import { onCommand, type CommandCache } from "./handler";
import { deciderOfSocket, personOfSocket } from "../people";

/** Who a decision made in a browser tab is recorded as. */
const WEB_DECIDER = "web";

/**
 * The approval queue for tabs: a cross-session subscription (the /approvals page,
 * the nav badge) and decisions. Decisions also appear on each session's own log.
 */
export function registerApprovalHandlers(socket: Socket, services: BridgeServices, commands: CommandCache): void {
  let unsubscribe: (() => void) | null = null;
  const decider = () => deciderOfSocket(socket, services, WEB_DECIDER);
  // A named person's queue holds only the sessions they can see (the launch token's holds all).
  const person = personOfSocket(socket);
  const visible = async (sessionId: string) =>
    !person || (await services.people.levelOn(person.id, sessionId)) !== null;
  // Checked one after another, so the tab gets changes in the order they happened.
  let delivered = Promise.resolve();

  onCommand(
    socket,
    "approvals.subscribe",
    approvalCommands["approvals.subscribe"],
    async (): Promise<{ pending: ApprovalView[] }> => {
      // Listen first, then read: a request made in between arrives twice at worst, and the tab keys by id.
      unsubscribe ??= services.approvals.onChange((change) => {
        delivered = delivered
          .then(async () => {
            if (await visible(change.approval.session_id)) socket.emit("approvals.changed", change);
          })
          .catch(() => undefined); // A failed check drops one change; the tab re-reads on reconnect.
      });
      const pending = await services.approvals.list({ status: "pending" });
      const shown = await Promise.all(pending.map((approval) => visible(approval.session_id)));
      return { pending: pending.filter((_approval, i) => shown[i]) };
    },
  );

  onCommand(socket, "approvals.unsubscribe", approvalCommands["approvals.unsubscribe"], async () => {
    unsubscribe?.();
    unsubscribe = null;
    return null;
  });

  onCommand(
    socket,
    "approval.decide",
    approvalCommands["approval.decide"],
    async ({ approvalId, decision, feedback }) =>
      services.approvals.decide(approvalId, { decision, feedback, decidedBy: decider() }),
    commands,
  );

  onCommand(
    socket,
    "approval.password",
    approvalCommands["approval.password"],
    async ({ approvalId, password }) => services.approvals.providePassword(approvalId, password, decider()),
    commands,
  );

  socket.on("disconnect", () => {
    unsubscribe?.();
    unsubscribe = null;
  });
}
