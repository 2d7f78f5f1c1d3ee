import * as z from "zod";
import { WorldlineError } from "../../../errors";
import {
  AddRunnerBody,
  DirectoryListing,
  FolderQuery,
  RunnerAccess,
  RunnerView,
  UpdateRunnerBody,
} from "../../../protocol";
import { personOfRequest } from "../../people";
import type { BridgeServices } from "../../services";
import { readJson } from "../io";
import type { Route } from "../router";

const tags = ["runners"];

function hub(services: BridgeServices) {
  if (!services.runners) throw new WorldlineError("runner:not_found", "This bridge serves no runners.");
  return services.runners;
}

export const runnerRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/v1/runners",
    doc: { summary: "Enrolled runners: name, connected, roots, last_seen", tags, response: z.array(RunnerView) },
    handler: async ({ services, req }) => {
      if (!services.runners) return [];
      const { runners } = services;
      const person = personOfRequest(req);
      const all = await runners.list();
      // A person sees the runners they may use; what they are limited to, and duplicates, are admins' to see.
      if (!person || person.role === "admin") return all;
      const usable = await Promise.all(all.map((runner) => runners.mayUse(runner.name, person)));
      return all
        .filter((_, index) => usable[index])
        .map(({ access: _access, duplicate_at: _duplicate, ...runner }) => runner);
    },
  },
  {
    method: "POST",
    path: "/api/v1/runners",
    status: 201,
    doc: {
      summary: "Enroll a runner; the answer holds its one-time token",
      tags,
      body: AddRunnerBody,
      response: z.object({ name: z.string(), token: z.string() }),
    },
    handler: async ({ services, req }) => {
      const body = AddRunnerBody.parse(await readJson(req));
      return { name: body.name, token: await hub(services).add(body.name, body.roots ?? []) };
    },
  },
  {
    method: "DELETE",
    path: "/api/v1/runners/:name",
    doc: {
      summary: "Revoke a runner; it is disconnected at once",
      tags,
      response: z.object({ revoked: z.literal(true) }),
    },
    handler: async ({ services, params }) => {
      if (!(await hub(services).revoke(params.name)))
        throw new WorldlineError("runner:not_found", `No runner named "${params.name}".`);
      return { revoked: true };
    },
  },
  {
    method: "PATCH",
    path: "/api/v1/runners/:name",
    doc: {
      summary:
        "Rename a runner (its sessions follow, and a connected runner reconnects under the new name), or set who may use it",
      tags,
      body: UpdateRunnerBody,
      response: z.object({ name: z.string(), access: RunnerAccess.optional() }),
    },
    handler: async ({ services, params, req }) => {
      const body = UpdateRunnerBody.parse(await readJson(req));
      const runners = hub(services);
      if (body.access && !(await runners.setAccess(params.name, body.access)))
        throw new WorldlineError("runner:not_found", `No runner named "${params.name}".`);
      if (body.name !== undefined && body.name !== params.name && !(await runners.rename(params.name, body.name)))
        throw new WorldlineError("runner:not_found", `No runner named "${params.name}".`);
      return { name: body.name ?? params.name, ...(body.access ? { access: body.access } : {}) };
    },
  },
  {
    method: "GET",
    path: "/api/v1/runners/:name/folders",
    doc: {
      summary: "Folders on a connected runner, to pick a workspace",
      tags,
      query: FolderQuery,
      response: DirectoryListing,
    },
    handler: async ({ services, params, query, req }) => {
      const { path } = FolderQuery.parse({ path: query.get("path") ?? undefined });
      await hub(services).requireUse(params.name, personOfRequest(req));
      return hub(services).listFolders(params.name, path);
    },
  },
];
