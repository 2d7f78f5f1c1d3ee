import path from "node:path";
import * as z from "zod";
import { WorldlineError } from "../../../errors";
import { FileDiagnostics, FileDiagnosticsQuery, LanguageServerStatus } from "../../../protocol";
import type { Route } from "../router";

const tags = ["diagnostics"];

/** Language-server diagnostics: the servers' states for Settings, and a file's errors for the editor. */
export const diagnosticRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/v1/diagnostics",
    doc: {
      summary: "Each language server's state, and why one gives no diagnostics (missing, crashed, slow)",
      tags,
      response: z.array(LanguageServerStatus),
    },
    handler: async ({ services }) => services.diagnostics?.status() ?? [],
  },
  {
    method: "GET",
    path: "/api/v1/sessions/:id/diagnostics",
    doc: {
      summary: "The errors a language server last published for a file of the session's workspace (`?path=`, relative)",
      tags,
      query: FileDiagnosticsQuery,
      response: FileDiagnostics,
    },
    handler: async ({ services, params, query }) => {
      const session = await services.sessions.get(params.id);
      const { path: relative } = FileDiagnosticsQuery.parse(Object.fromEntries(query));
      const workspace = session.workspace.path;
      const file = path.resolve(workspace, relative);
      if (path.relative(workspace, file).startsWith("..")) {
        throw new WorldlineError("fs:outside_workspace", "`path` must be inside the session's workspace.");
      }
      return {
        path: relative,
        diagnostics: services.diagnostics?.lastErrors(workspace, file, session.runner ?? null) ?? null,
      };
    },
  },
];
