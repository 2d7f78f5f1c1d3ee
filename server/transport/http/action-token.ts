import type { IncomingMessage, ServerResponse } from "node:http";
import { DecideApprovalBody } from "../../protocol";
import { WorldlineError } from "../../errors";
import { isActionToken } from "../../notify";
import type { BridgeServices } from "../services";
import { bearerOf } from "../auth";
import { readJson, sendJson } from "./io";

const APPROVAL_ROUTE = /^\/api\/v1\/approvals\/([^/]+)$/;

/**
 * A notification's action token opens one route for one approval:
 * `POST /api/v1/approvals/:id`, without a cookie. It is used up by the decision's first step, so a
 * replay, another approval's token or an expired one is a 401 and decides nothing. False when the
 * request carries no action token (the other credentials are checked as usual).
 */
export async function decideWithActionToken(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  services: BridgeServices,
): Promise<boolean> {
  const token = bearerOf(req);
  if (!isActionToken(token)) return false;
  const approvalId = req.method === "POST" ? APPROVAL_ROUTE.exec(url.pathname)?.[1] : undefined;
  if (!approvalId) throw refused();
  // The body first: a malformed one is a 400 that leaves the token usable.
  const body = DecideApprovalBody.parse(await readJson(req));
  const decidedBy = await services.push?.useActionToken(token, decodeURIComponent(approvalId));
  if (!decidedBy) throw refused();
  sendJson(res, 200, await services.approvals.decide(decodeURIComponent(approvalId), { ...body, decidedBy }));
  return true;
}

function refused(): WorldlineError {
  return new WorldlineError("auth:unauthorized", "This action token is used, expired or not for this request.");
}
