import type { Route } from "../router";

export const healthRoutes: Route[] = [
  { method: "GET", path: "/api/v1/health", handler: async ({ services }) => ({ ok: true, version: services.version }) },
  {
    // Same-origin pages read this to sign state-changing requests; other origins can't read it.
    method: "GET",
    path: "/api/v1/csrf",
    handler: async ({ services }) => ({ csrf: services.auth.csrfToken }),
  },
];
