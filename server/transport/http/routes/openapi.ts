import type { Route, Router } from "../router";
import { buildOpenApi } from "../openapi";

/** GET /api/v1/openapi.json describes every route of `router`, itself included. */
export function openApiRoutes(router: Router): Route[] {
  let cached: Record<string, unknown> | undefined;
  return [
    {
      method: "GET",
      path: "/api/v1/openapi.json",
      doc: { summary: "This OpenAPI document", tags: ["bridge"] },
      handler: async ({ services }) => (cached ??= buildOpenApi(router.list(), services.version)),
    },
  ];
}
