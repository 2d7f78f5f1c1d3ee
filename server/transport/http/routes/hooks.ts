import * as z from "zod";
import { WorldlineError } from "../../../errors";
import { HooksFileView, TrustHooksBody } from "../../../protocol";
import { readJson } from "../io";
import type { Route } from "../router";
import type { BridgeServices } from "../../services";

const tags = ["hooks"];

function hooksOf(services: BridgeServices): NonNullable<BridgeServices["hooks"]> {
  if (!services.hooks) throw new WorldlineError("hooks:unavailable", "This bridge runs no hooks.");
  return services.hooks;
}

/** Lifecycle hooks: which files a session's turns read, and trusting one content of one. */
export const hookRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/v1/sessions/:id/hooks",
    doc: {
      summary:
        "The hooks files of a session's workspace and of WORLDLINE_HOME, each with its sha256 and whether it is trusted",
      tags,
      response: z.array(HooksFileView),
    },
    handler: async ({ services, params }) => {
      const session = await services.sessions.get(params.id);
      return hooksOf(services).list(session.workspace.path, services.hosts.of(session.runner));
    },
  },
  {
    method: "POST",
    path: "/api/v1/hooks/trust",
    doc: {
      summary:
        "Trust one content (sha256) of a workspace's hooks file: its hooks run from the next turn; a changed file asks again",
      tags,
      body: TrustHooksBody,
      response: z.object({ file: z.string(), sha256: z.string(), trusted: z.literal(true) }),
    },
    handler: async ({ services, req }) => {
      const { file, sha256 } = TrustHooksBody.parse(await readJson(req));
      await hooksOf(services).trust.trust(file, sha256);
      return { file, sha256, trusted: true as const };
    },
  },
];
