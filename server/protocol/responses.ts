import * as z from "zod";
import { IdeLayout } from "./ide";
import { ReviewChanges, ReviewRevertResult } from "./review";

/**
 * Answers of the HTTP API that have no schema of their own elsewhere in the protocol: the UI's
 * `api()` parses every answer with one (components/transport/client.ts).
 */

/** DELETE of a session, a rule or a memory. */
export const Deleted = z.object({ deleted: z.literal(true) });

/** PUT /sessions/:id/files/content: the file as written. */
export const SavedFile = z.object({ path: z.string(), hash: z.string(), mtimeMs: z.number() });

/** GET /sessions/:id/files/search: workspace paths for @-mentions. */
export const FileSearchResult = z.object({ files: z.array(z.string()), truncated: z.boolean().optional() });

/** GET and PUT /settings/layout: null until the user changed the layout once. */
export const LayoutAnswer = z.object({ layout: IdeLayout.nullable() });

/** GET /sessions-search: ids of the sessions whose title or content matches. */
export const SessionSearchResult = z.object({ ids: z.array(z.string()) });

/** GET /workspaces/recent. */
export const RecentWorkspaces = z.array(z.object({ path: z.string(), name: z.string(), last_opened_at: z.string() }));

/** GET /sessions/:id/mcp (server/tools/mcp/sessions.ts). */
export const McpStatusView = z.object({
  servers: z.array(
    z.object({
      name: z.string(),
      transport: z.enum(["stdio", "http"]),
      state: z.enum(["idle", "starting", "ready", "failed", "closed"]),
      source: z.enum(["workspace", "client"]),
      toolCount: z.number(),
      error: z.string().optional(),
    }),
  ),
  /** Problems with the config files; the other servers still run. */
  errors: z.array(z.string()),
});
export type McpStatusView = z.infer<typeof McpStatusView>;

/** POST /sessions/:id/changes/{accept,revert}: the changes left, or what a revert did. */
export const ReviewActionResult = z.union([ReviewChanges, ReviewRevertResult]);
