import type { Socket } from "socket.io";
import { approvalCommands, type ApprovalView } from "../../protocol";
import type { BridgeServices } from "../services";
import { onCommand, type CommandCache } from "./handler";
import { deciderOfSocket } from "../people";

/** Who a decision made in a browser tab is recorded as. */
const WEB_DECIDER = "web";

/**
 * The approval queue for tabs: a cross-session subscription (the /approvals page,
 * the nav badge) and decisions. Decisions also appear on each session's own log.
 */
export function registerApprovalHandlers(socket: Socket, services: BridgeServices, commands: CommandCache): void {
  let unsubscribe: (() => void) | null = null;
  const decider = () => deciderOfSocket(socket, services, WEB_DECIDER);

  onCommand(
    socket,
    "approvals.subscribe",
    approvalCommands["approvals.subscribe"],
    async (): Promise<{ pending: ApprovalView[] }> => {
      // Listen first, then read: a request made in between arrives twice at worst, and the tab keys by id.
      unsubscribe ??= services.approvals.onChange((change) => socket.emit("approvals.changed", change));
      return { pending: await services.approvals.list({ status: "pending" }) };
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
