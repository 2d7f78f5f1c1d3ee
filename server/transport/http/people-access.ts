import type { IncomingMessage } from "node:http";
import { WorldlineError } from "../../errors";
import { httpNeed, requireRole, sessionHttpAllowed, type Level, type Person } from "../../people";
import type { BridgeServices } from "../services";

/**
 * The one check of a named person's HTTP request, before the router: a session (or its approval
 * or task) they cannot see is a 404 as if it did not exist; one they see at too low a level, or
 * a route above their role, is a 403. See server/people/policy.ts for the rules.
 */
export async function authorizePerson(
  req: IncomingMessage,
  pathname: string,
  person: Person,
  services: BridgeServices,
): Promise<void> {
  const method = req.method ?? "GET";
  const need = httpNeed(method, pathname);
  switch (need.kind) {
    case "role":
      return requireRole(person, need.role);
    case "session": {
      const level = await visibleLevel(services, person, need.sessionId);
      if (!sessionHttpAllowed(level, need.sessionId, method, pathname)) throw forbidden(level);
      return;
    }
    case "approval": {
      const sessionId = await services.people.sessionOfApproval(need.approvalId);
      if (!sessionId) throw new WorldlineError("approval:not_found", `No approval with id "${need.approvalId}".`);
      const level = await visibleLevel(services, person, sessionId, "approval");
      if (need.drive && level === "view") throw forbidden(level);
      return;
    }
    case "task": {
      const sessionId = await services.people.sessionOfTask(need.taskId);
      if (!sessionId) throw new WorldlineError("task:not_found", `No task with id "${need.taskId}".`);
      const level = await visibleLevel(services, person, sessionId, "task");
      if (need.drive && level === "view") throw forbidden(level);
      return;
    }
  }
}

async function visibleLevel(
  services: BridgeServices,
  person: Person,
  sessionId: string,
  what = "session",
): Promise<Level> {
  const level = await services.people.levelOn(person.id, sessionId);
  // Not "forbidden": whether someone else's session exists is not theirs to learn.
  if (!level) throw new WorldlineError(`${what}:not_found`, `No ${what} with that id.`);
  return level;
}

function forbidden(level: Level): WorldlineError {
  return new WorldlineError(
    "auth:forbidden",
    level === "view" ? "You can only view this session." : "Only the session's owner or an admin can do that.",
  );
}
