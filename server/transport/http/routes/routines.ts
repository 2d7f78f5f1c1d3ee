import type { IncomingMessage } from "node:http";
import * as z from "zod";
import {
  CreatedRoutine,
  CreateRoutineBody,
  FiredRoutine,
  RoutineRunView,
  RoutineView,
  UpdateRoutineBody,
} from "../../../protocol";
import { WorldlineError } from "../../../errors";
import type { Routines } from "../../../routines";
import { personOfRequest } from "../../people";
import type { BridgeServices } from "../../services";
import { readJson } from "../io";
import type { Route } from "../router";

const tags = ["routines"];

export const routineRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/v1/routines",
    doc: { summary: "List routines (a member's own on a hub)", tags, response: z.array(RoutineView) },
    handler: async ({ services, req }) => routinesOf(services).list(ownerScope(req)),
  },
  {
    method: "POST",
    path: "/api/v1/routines",
    status: 201,
    doc: {
      summary: "Create a routine; its fire token is shown once",
      tags,
      body: CreateRoutineBody,
      response: CreatedRoutine,
    },
    handler: async ({ services, req }) => {
      const body = CreateRoutineBody.parse(await readJson(req));
      const { routine, token } = await routinesOf(services).create(body, personOfRequest(req)?.id ?? null);
      return { ...routine, token };
    },
  },
  {
    method: "GET",
    path: "/api/v1/routines/:id",
    doc: { summary: "One routine", tags, response: RoutineView },
    handler: async ({ services, params, req }) => routinesOf(services).get(params.id, ownerScope(req)),
  },
  {
    method: "PATCH",
    path: "/api/v1/routines/:id",
    doc: {
      summary: "Change a routine (`schedule: null` removes its schedule)",
      tags,
      body: UpdateRoutineBody,
      response: RoutineView,
    },
    handler: async ({ services, params, req }) => {
      const body = UpdateRoutineBody.parse(await readJson(req));
      return routinesOf(services).update(params.id, body, ownerScope(req));
    },
  },
  {
    method: "DELETE",
    path: "/api/v1/routines/:id",
    doc: { summary: "Delete a routine and its run history", tags },
    handler: async ({ services, params, req }) => {
      await routinesOf(services).remove(params.id, ownerScope(req));
      return { deleted: true, id: params.id };
    },
  },
  {
    method: "GET",
    path: "/api/v1/routines/:id/runs",
    doc: { summary: "A routine's runs, newest first", tags, response: z.array(RoutineRunView) },
    handler: async ({ services, params, req }) => routinesOf(services).runs(params.id, ownerScope(req)),
  },
  {
    method: "POST",
    path: "/api/v1/routines/:id/fire",
    status: 202,
    doc: { summary: "Run a routine now (or queue one run behind the running one)", tags, response: FiredRoutine },
    handler: async ({ services, params, req }) =>
      routinesOf(services).fire(params.id, await optionalJson(req), ownerScope(req)),
  },
];

/**
 * `POST /api/v1/routines/:id/fire` with the routine's own token, before any other auth: that token
 * is good for this one route of this one routine (a webhook calls it directly). Returns false when
 * the request is not such a call, so the ordinary checks run.
 */
export async function fireWithRoutineToken(
  req: IncomingMessage,
  pathname: string,
  services: BridgeServices,
): Promise<{ status: number; body: unknown } | null> {
  const match = /^\/api\/v1\/routines\/([^/]+)\/fire$/.exec(pathname);
  const bearer = /^Bearer\s+(wlr_\S+)$/i.exec(req.headers.authorization ?? "")?.[1];
  if (req.method !== "POST" || !match || !bearer || !services.routines) return null;
  const routineId = await services.routines.routineOfToken(bearer);
  if (routineId !== decodeURIComponent(match[1])) {
    throw new WorldlineError("auth:unauthorized", "This routine token is wrong, revoked or for another routine.");
  }
  return { status: 202, body: await services.routines.fire(routineId, await optionalJson(req)) };
}

/** A fire's body is optional; when sent it must be JSON (at most 1 MB, like every body). */
async function optionalJson(req: IncomingMessage): Promise<unknown> {
  const length = Number(req.headers["content-length"] ?? 0);
  if (!req.headers["content-type"] && !length && !req.headers["transfer-encoding"]) return undefined;
  return readJson(req);
}

/** On a hub a person sees and fires their own routines; the launch and named tokens see all. */
function ownerScope(req: IncomingMessage): string | undefined {
  const person = personOfRequest(req);
  return person && person.role !== "admin" ? person.id : undefined;
}

function routinesOf(services: BridgeServices): Routines {
  if (!services.routines) throw new WorldlineError("routine:unavailable", "Routines are not available on this bridge.");
  return services.routines;
}
