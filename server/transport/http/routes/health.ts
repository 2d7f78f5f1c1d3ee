import { processErrorCounts } from "../../../process-errors";
import { storeHealth } from "../../../store";
import type { Route } from "../router";

export const healthRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/v1/health",
    handler: async ({ services }) => {
      const errors = processErrorCounts();
      return {
        ok: true,
        version: services.version,
        // Errors nothing caught since start (server/process-errors.ts): the bridge kept serving through them.
        errors: { unhandled_rejections: errors.unhandledRejections, uncaught_exceptions: errors.uncaughtExceptions },
        turns: services.runtime.load(),
        store: { fault: storeHealth.fault },
      };
    },
  },
  {
    // Same-origin pages read this to sign state-changing requests; other origins can't read it.
    method: "GET",
    path: "/api/v1/csrf",
    handler: async ({ services }) => ({ csrf: services.auth.csrfToken }),
  },
];
