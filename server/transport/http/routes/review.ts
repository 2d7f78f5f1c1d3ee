import { ReviewActionBody, ReviewQuery } from "../../../protocol";
import { readJson } from "../io";
import type { Route } from "../router";

/**
 * The Changes view (server/checkpoints/review.ts): files and hunks changed since a base
 * checkpoint (`?base=start` by default), accept (marks reviewed) and revert (checkpointed,
 * undone by POST …/rewind/undo).
 */
export const reviewRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/v1/sessions/:id/changes",
    handler: ({ services, params, query }) =>
      services.checkpoints.changes(params.id, ReviewQuery.parse(Object.fromEntries(query)).base),
  },
  {
    method: "POST",
    path: "/api/v1/sessions/:id/changes/accept",
    handler: async ({ services, params, req }) =>
      services.checkpoints.acceptChange(params.id, ReviewActionBody.parse(await readJson(req))),
  },
  {
    method: "POST",
    path: "/api/v1/sessions/:id/changes/revert",
    handler: async ({ services, params, req }) =>
      services.checkpoints.revertChange(params.id, ReviewActionBody.parse(await readJson(req))),
  },
];
