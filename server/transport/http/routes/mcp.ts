import type { Route } from "../router";

/** The MCP servers of a session (workspace config and ACP client), with their state: `idle` until its first turn. */
export const mcpRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/v1/sessions/:id/mcp",
    handler: async ({ services, params }) => {
      const session = await services.sessions.get(params.id);
      if (!services.mcp) return { servers: [], errors: [] };
      return services.mcp.status(session.id, session.workspace.path);
    },
  },
];
