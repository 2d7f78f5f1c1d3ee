import { ArchiveBody, CommitBody, MergeBody, PushBody } from "../../../protocol";
import { WorldlineError } from "../../../errors";
import type { BridgeServices } from "../../services";
import { readJson } from "../io";
import type { Route } from "../router";

/** Shipping and keeping a worktree session's work (server/worktrees). */
export const worktreeRoutes: Route[] = [
  {
    method: "POST",
    path: "/api/v1/sessions/:id/commit",
    handler: async ({ services, params, req }) =>
      worktrees(services).commit(params.id, CommitBody.parse(await readJson(req))),
  },
  {
    method: "POST",
    path: "/api/v1/sessions/:id/merge",
    handler: async ({ services, params, req }) =>
      worktrees(services).merge(params.id, MergeBody.parse(await readJson(req))),
  },
  {
    method: "POST",
    path: "/api/v1/sessions/:id/push",
    handler: async ({ services, params, req }) =>
      worktrees(services).push(params.id, PushBody.parse(await readJson(req))),
  },
  {
    method: "POST",
    path: "/api/v1/sessions/:id/resolve",
    handler: async ({ services, params }) => worktrees(services).resolve(params.id),
  },
  {
    method: "POST",
    path: "/api/v1/sessions/:id/archive",
    handler: async ({ services, params, req }) =>
      worktrees(services).archive(params.id, ArchiveBody.parse(await readJson(req))),
  },
  {
    method: "POST",
    path: "/api/v1/sessions/:id/restore",
    handler: async ({ services, params }) => worktrees(services).restore(params.id),
  },
];

function worktrees(services: BridgeServices): NonNullable<BridgeServices["worktrees"]> {
  if (!services.worktrees) throw new WorldlineError("worktree:unavailable", "This bridge has no worktree sessions.");
  return services.worktrees;
}
