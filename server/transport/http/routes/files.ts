import { FileQuery, FileSearchQuery, FileTreeQuery, WriteFileBody, type GitStatus } from "../../../protocol";
import { readJson } from "../io";
import type { Route, RouteContext } from "../router";

/** The workspace of a session, as the IDE's file tree, editor and @-mentions see it. */
async function workspaceOf({ services, params }: RouteContext): Promise<string> {
  return (await services.sessions.get(params.id)).workspace.path;
}

export const fileRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/v1/sessions/:id/files/tree",
    handler: async (ctx) => {
      const { dir, ignored } = FileTreeQuery.parse({
        dir: ctx.query.get("dir") ?? undefined,
        ignored: ctx.query.get("ignored") ?? undefined,
      });
      return ctx.services.files.list(await workspaceOf(ctx), dir, ignored === "1");
    },
  },
  {
    method: "GET",
    path: "/api/v1/sessions/:id/files/content",
    handler: async (ctx) => {
      const { path } = FileQuery.parse({ path: ctx.query.get("path") ?? undefined });
      return ctx.services.files.read(await workspaceOf(ctx), path);
    },
  },
  {
    method: "PUT",
    path: "/api/v1/sessions/:id/files/content",
    handler: async (ctx) => {
      const body = WriteFileBody.parse(await readJson(ctx.req));
      const { path, ...input } = body;
      return ctx.services.files.write(await workspaceOf(ctx), path, input);
    },
  },
  {
    method: "GET",
    path: "/api/v1/sessions/:id/files/search",
    handler: async (ctx) => {
      const { q, limit } = FileSearchQuery.parse({
        q: ctx.query.get("q") ?? undefined,
        limit: ctx.query.get("limit") ?? undefined,
      });
      return ctx.services.files.search(await workspaceOf(ctx), q, limit);
    },
  },
  {
    method: "GET",
    path: "/api/v1/sessions/:id/files/git",
    handler: async (ctx): Promise<GitStatus> => {
      const markers = await ctx.services.files.gitStatus(await workspaceOf(ctx));
      return { repo: markers !== null, markers: markers ?? {} };
    },
  },
];
