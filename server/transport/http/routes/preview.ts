import { WorldlineError } from "../../../errors";
import { PreviewAuthorizeQuery, PreviewCapture, PreviewCaptureBody, SessionPorts } from "../../../protocol";
import type { BridgeServices } from "../../services";
import { readJson } from "../io";
import type { Route } from "../router";

/** Ports and previews of a session (server/preview). */
export const previewRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/v1/sessions/:id/ports",
    doc: {
      summary: "TCP ports the session's processes listen on, with their preview addresses",
      tags: ["preview"],
      response: SessionPorts,
    },
    handler: async ({ services, params }) => previewsOf(services).list(params.id),
  },
  {
    // A browser signed in to the IDE (token, person, or a share link that may view the session) is sent
    // to the preview host with a one-time ticket; that host sets its own cookie from it.
    method: "GET",
    path: "/api/v1/sessions/:id/preview/authorize",
    doc: {
      summary: "Redirects a signed-in browser to a preview origin with a one-time ticket",
      tags: ["preview"],
      query: PreviewAuthorizeQuery,
    },
    handler: async ({ services, params, query, res }) => {
      const { port, path } = PreviewAuthorizeQuery.parse(Object.fromEntries(query));
      const location = await previewsOf(services).authorize(params.id, port, path);
      res.writeHead(302, { location, "cache-control": "no-store", "referrer-policy": "no-referrer" });
      res.end();
      return undefined;
    },
  },
  {
    // "Pick element": the bridge's browser opens the preview at the panel's size and crops the element.
    method: "POST",
    path: "/api/v1/sessions/:id/preview/capture",
    doc: {
      summary: "A screenshot of one element of a preview",
      tags: ["preview"],
      body: PreviewCaptureBody,
      response: PreviewCapture,
    },
    handler: async ({ services, params, req }) => {
      const body = PreviewCaptureBody.parse(await readJson(req));
      const previews = previewsOf(services);
      if (!(await previews.list(params.id)).some((entry) => entry.port === body.port))
        throw new WorldlineError("preview:not_found", `No process of this session listens on port ${body.port}.`);
      if (!services.browsers) throw new WorldlineError("preview:unavailable", "This bridge has no browser.");
      const url = `${previews.origin({ sessionId: params.id, port: body.port })}${body.path}`;
      const dataBase64 = await services.browsers.captureElement(params.id, { ...body, url });
      return { mediaType: "image/png", dataBase64 } satisfies PreviewCapture;
    },
  },
];

function previewsOf(services: BridgeServices) {
  if (!services.previews) throw new WorldlineError("preview:unavailable", "This bridge serves no previews.");
  return services.previews;
}
