import { CheckpointSettings, ForkBody, RewindBody, UndoBody } from "../../../protocol";
import type { IncomingMessage } from "node:http";
import { readJson } from "../io";
import type { Route } from "../router";
import { claimSession } from "../../people";

/** Undo calls may come without a body. */
async function optionalJson(req: IncomingMessage): Promise<unknown> {
  const empty =
    !req.headers["content-type"] && (req.headers["content-length"] ?? "0") === "0" && !req.headers["transfer-encoding"];
  return empty ? {} : ((await readJson(req)) ?? {});
}

/**
 * Checkpoints (the public API: server/transport/http/openapi-docs.ts): the timeline, a diff preview, rewind (conversation, files or
 * both; 409 `checkpoint:conflict` with `details.paths` for edits made outside the agent),
 * undo of the last rewind, `/undo` (the last turn), fork, and the D-Mail files setting.
 */
export const checkpointRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/v1/sessions/:id/checkpoints",
    handler: ({ services, params }) => services.checkpoints.list(params.id),
  },
  {
    method: "GET",
    path: "/api/v1/sessions/:id/checkpoints/:cid/diff",
    handler: ({ services, params }) => services.checkpoints.diff(params.id, params.cid),
  },
  {
    method: "POST",
    path: "/api/v1/sessions/:id/rewind",
    handler: async ({ services, params, req }) =>
      services.checkpoints.rewind(params.id, RewindBody.parse(await readJson(req))),
  },
  {
    method: "POST",
    path: "/api/v1/sessions/:id/rewind/undo",
    handler: async ({ services, params, req }) =>
      services.checkpoints.undoRewind(params.id, UndoBody.parse(await optionalJson(req))),
  },
  {
    method: "POST",
    path: "/api/v1/sessions/:id/undo",
    handler: async ({ services, params, req }) =>
      services.checkpoints.undoTurn(params.id, UndoBody.parse(await optionalJson(req))),
  },
  {
    method: "POST",
    path: "/api/v1/sessions/:id/fork",
    status: 201,
    handler: async ({ services, params, req }) => {
      const forked = await services.checkpoints.fork(params.id, ForkBody.parse(await readJson(req)));
      await claimSession(req, services, forked.id);
      return forked;
    },
  },
  {
    method: "GET",
    path: "/api/v1/sessions/:id/checkpoint-settings",
    handler: ({ services, params }) => services.checkpoints.settings(params.id),
  },
  {
    method: "PATCH",
    path: "/api/v1/sessions/:id/checkpoint-settings",
    handler: async ({ services, params, req }) =>
      services.checkpoints.updateSettings(
        params.id,
        CheckpointSettings.partial()
          .strict()
          .parse(await readJson(req)),
      ),
  },
];
