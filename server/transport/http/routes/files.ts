import { FileQuery, FileSearchQuery, FileTreeQuery, WriteFileBody, type GitStatus } from "../../../protocol";
import type { FilesPort } from "../../../host";
import { readJson } from "../io";
import type { Route, RouteContext } from "../router";

/** The workspace of a session, as the IDE's file tree, editor and @-mentions see it, through its host. */
async function workspaceOf({ services, params }: RouteContext): Promise<{ root: string; files: FilesPort }> {
  const session = await services.sessions.get(params.id);
  return { root: session.workspace.path, files: services.hosts.of(session.runner).files };
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
      const { root, files } = await workspaceOf(ctx);
      return files.list(root, dir, ignored === "1");
    },
  },
  {
    method: "GET",
    path: "/api/v1/sessions/:id/files/content",
    handler: async (ctx) => {
      const { path } = FileQuery.parse({ path: ctx.query.get("path") ?? undefined });
      const { root, files } = await workspaceOf(ctx);
      return files.read(root, path);
    },
  },
  {
    method: "PUT",
    path: "/api/v1/sessions/:id/files/content",
    handler: async (ctx) => {
      const body = WriteFileBody.parse(await readJson(ctx.req));
      const { path, ...input } = body;
      const { root, files } = await workspaceOf(ctx);
      return files.write(root, path, input);
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
      const { root, files } = await workspaceOf(ctx);
      return files.search(root, q, limit);
    },
  },
  {
    method: "GET",
    path: "/api/v1/sessions/:id/files/git",
    handler: async (ctx): Promise<GitStatus> => {
      const { root, files } = await workspaceOf(ctx);
      const markers = await files.gitStatus(root);
      return { repo: markers !== null, markers: markers ?? {} };
    },
  },
];
