import * as z from "zod";
import {
  DefaultModelBody,
  ForceQuery,
  IdeLayout,
  PricesView,
  SavePricesBody,
  SaveProviderBody,
  TestConnectionBody,
  type SettingsView,
} from "../../../protocol";
import type { BridgeConfig } from "../../../config";
import { defaultPrices, detectedFormsFor } from "../../../agent";
import { readJson } from "../io";
import type { Route } from "../router";
import { visibleSessions } from "../../people";

/** Providers, models, the default model, connection tests and the per-user IDE layout. Keys never leave the bridge. */
export const settingsRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/v1/settings",
    handler: async ({ services }) => withDetected(await services.settings.view(), services.config),
  },
  {
    method: "POST",
    path: "/api/v1/settings/providers",
    handler: async ({ services, req }) =>
      withDetected(await services.settings.saveProvider(SaveProviderBody.parse(await readJson(req))), services.config),
  },
  {
    method: "DELETE",
    path: "/api/v1/settings/providers/:providerId",
    handler: async ({ services, params }) =>
      withDetected(await services.settings.removeProvider(params.providerId), services.config),
  },
  {
    method: "PUT",
    path: "/api/v1/settings/default-model",
    handler: async ({ services, req }) =>
      withDetected(
        await services.settings.setDefaultModel(DefaultModelBody.parse(await readJson(req))),
        services.config,
      ),
  },
  {
    method: "POST",
    path: "/api/v1/settings/test-connection",
    handler: async ({ services, req }) =>
      services.settings.testConnection(TestConnectionBody.parse(await readJson(req))),
  },
  {
    method: "GET",
    path: "/api/v1/settings/prices",
    doc: {
      summary: "Model prices (USD per million tokens): the user's and the defaults",
      tags: ["settings"],
      response: PricesView,
    },
    handler: async ({ services }) => ({ prices: await services.settings.prices(), defaults: defaultPrices() }),
  },
  {
    method: "PUT",
    path: "/api/v1/settings/prices",
    doc: {
      summary: "Save the user's model prices (replaces them all)",
      tags: ["settings"],
      body: SavePricesBody,
      response: PricesView,
    },
    handler: async ({ services, req }) => ({
      prices: await services.settings.savePrices(SavePricesBody.parse(await readJson(req)).prices),
      defaults: defaultPrices(),
    }),
  },
  {
    method: "GET",
    path: "/api/v1/settings/layout",
    handler: async ({ services }) => ({ layout: await services.settings.layout() }),
  },
  {
    method: "PUT",
    path: "/api/v1/settings/layout",
    handler: async ({ services, req }) => ({
      layout: await services.settings.saveLayout(IdeLayout.parse(await readJson(req))),
    }),
  },
];

/**
 * Every settings view the routes answer with carries what each provider's last response looked like
 * (server/agent/provider/detected-forms.ts), the environment's provider included: a view without it
 * (after a save) would make the forms vanish from the page.
 */
function withDetected(view: SettingsView, config: BridgeConfig): SettingsView {
  return {
    ...view,
    providers: view.providers.map((provider) => ({ ...provider, detected: detectedFormsFor(provider.baseURL) })),
    envDetected: config.model ? detectedFormsFor(config.model.baseURL) : null,
  };
}

const SessionSearchQuery = z.object({ q: z.string().max(200).default("") });

/** The session list's extras: delete, search across titles and content, recent workspaces. */
export const sessionListRoutes: Route[] = [
  {
    method: "DELETE",
    path: "/api/v1/sessions/:id",
    handler: async ({ services, params, query }) => {
      // A worktree that holds unmerged work refuses, as archive does, unless `?force=1`.
      const { force } = ForceQuery.parse({ force: query.get("force") ?? undefined });
      await services.worktrees?.beforeDelete(params.id, force === "1" || force === "true");
      // On whichever bridge runs the turn; prompts queued behind it end too, never reaching the model.
      await services.turns.cancel(params.id, { dropQueued: true });
      // What runs or is kept on the session's behalf goes with it: terminals, background tasks,
      // MCP servers, an external agent process, the runtime's and checkpoints' state.
      await services.janitor.forget(params.id, "deleted");
      await services.sessions.remove(params.id);
      services.log.release(params.id);
      services.board?.removed(params.id);
      return { deleted: true };
    },
  },
  {
    method: "GET",
    path: "/api/v1/sessions-search",
    handler: async ({ services, query, req }) => {
      const { q } = SessionSearchQuery.parse({ q: query.get("q") ?? undefined });
      const ids = q.trim() ? await services.sessions.search(q.trim()) : [];
      const visible = await visibleSessions(req, services);
      return { ids: visible ? ids.filter((id) => visible.has(id)) : ids };
    },
  },
  {
    method: "GET",
    path: "/api/v1/workspaces/recent",
    // A person sees the folders of sessions they can see, not every folder anyone opened on the hub.
    handler: async ({ services, req }) => services.sessions.recentWorkspaces(await visibleSessions(req, services)),
  },
];
