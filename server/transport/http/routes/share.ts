import { networkInterfaces } from "node:os";
import { isLoopbackHost } from "../../../config";
import { CreateShareLinkBody, type AccessView } from "../../../protocol";
import type { BridgeServices } from "../../services";
import { readJson } from "../io";
import type { Route } from "../router";
import { shareOfRequest } from "../share-access";
import { personOfRequest } from "../../people";

/** Share links of a session (owner only: server/sharing/policy.ts refuses these paths to links). */
export const shareRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/v1/access",
    handler: async ({ req, services, query }): Promise<AccessView> => {
      const share = shareOfRequest(req);
      if (share) return { access: share.scope, session_id: share.sessionId };
      const person = personOfRequest(req);
      // A named person: their level on the session asked about (?session_id=), else what their role allows.
      const sessionId = query.get("session_id");
      if (person && sessionId) {
        const level = await services.people.levelOn(person.id, sessionId);
        return { access: level ?? "view", session_id: sessionId };
      }
      if (person?.role === "viewer") return { access: "view", session_id: null };
      return { access: "owner", session_id: null };
    },
  },
  {
    method: "GET",
    path: "/api/v1/sessions/:id/share-links",
    handler: async ({ services, params }) => {
      await services.sessions.get(params.id);
      return services.shares.list(params.id);
    },
  },
  {
    method: "POST",
    path: "/api/v1/sessions/:id/share-links",
    status: 201,
    handler: async ({ services, params, req }) => {
      const body = CreateShareLinkBody.parse(await readJson(req));
      await services.sessions.get(params.id);
      const created = await services.shares.create(params.id, { scope: body.scope, expiresInSeconds: body.expires_in });
      const port = Number(new URL(`http://${req.headers.host ?? "localhost"}`).port) || services.config.port;
      return { ...created, lan_urls: lanUrls(services, port, created.path) };
    },
  },
  {
    method: "DELETE",
    path: "/api/v1/sessions/:id/share-links/:linkId",
    handler: async ({ services, params }) => services.shares.revoke(params.id, params.linkId),
  },
];

/** Addresses another device can open, only when the bridge was started for the LAN. */
function lanUrls(services: BridgeServices, port: number, path: string): string[] {
  const { config } = services;
  if (!config.allowLan) return [];
  const names = new Set(config.extraHosts);
  if (config.host === "0.0.0.0" || config.host === "::") {
    for (const entry of Object.values(networkInterfaces()).flat()) {
      if (entry && !entry.internal && entry.family === "IPv4") names.add(entry.address);
    }
  } else if (!isLoopbackHost(config.host)) {
    names.add(config.host.includes(":") ? `[${config.host}]` : config.host);
  }
  return [...names].map((name) => `http://${name}:${port}${path}`);
}
