import { CreateSessionBody, DirectoryQuery, EventsQuery, ForceQuery, UpdateSessionBody } from "../../../protocol";
import { listDirectories } from "../../../sessions";
import { WorldlineError } from "../../../errors";
import { readJson } from "../io";
import type { Route } from "../router";
import { claimSession, personOfRequest, visibleSessions } from "../../people";

export const sessionRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/v1/sessions",
    handler: async ({ services, query, req }) => {
      const sessions = await services.sessions.list({ includeArchived: query.get("archived") === "1" });
      const visible = await visibleSessions(req, services);
      const shown = visible ? sessions.filter((session) => visible.has(session.id)) : sessions;
      return services.sessions.summaries(shown);
    },
  },
  {
    method: "POST",
    path: "/api/v1/sessions",
    status: 201,
    handler: async ({ services, req }) => {
      const body = CreateSessionBody.parse(await readJson(req));
      const person = personOfRequest(req);
      if (body.runner && services.runners) await services.runners.requireUse(body.runner, person);
      const { isolation, base, branch, ...inPlace } = body;
      if (isolation !== "worktree" && (base !== undefined || branch !== undefined))
        throw new WorldlineError("session:invalid", '`base` and `branch` go with isolation "worktree".');
      const session =
        isolation === "worktree"
          ? await (services.worktrees ?? noWorktrees()).create(body, person?.role)
          : await services.sessions.create({ ...inPlace, role: person?.role });
      await claimSession(req, services, session.id);
      return services.sessions.summary(session);
    },
  },
  {
    method: "GET",
    path: "/api/v1/sessions/:id",
    handler: async ({ services, params }) => {
      const session = await services.sessions.get(params.id);
      return {
        ...(await services.sessions.summary(session)),
        running_task_id: await services.turns.runningTurn(session.id),
        usage: await services.sessions.usage(session.id),
        stop_reason: await services.sessions.lastStopReason(session.id),
      };
    },
  },
  {
    method: "PATCH",
    path: "/api/v1/sessions/:id",
    handler: async ({ services, params, req, query }) => {
      const body = UpdateSessionBody.parse(await readJson(req));
      // Archiving a worktree session removes its folder, by the worktree's rule (`?force=1` as for DELETE).
      const { force } = ForceQuery.parse({ force: query.get("force") ?? undefined });
      const { archived, ...rest } = body;
      const done =
        archived !== undefined &&
        (await services.worktrees?.setArchived(params.id, archived, force === "1" || force === "true"));
      return services.sessions.summary(await services.sessions.update(params.id, done ? rest : body));
    },
  },
  {
    method: "POST",
    path: "/api/v1/sessions/:id/cancel",
    handler: async ({ services, params }) => {
      await services.sessions.get(params.id);
      return { cancelled: await services.turns.cancel(params.id) };
    },
  },
  {
    method: "GET",
    path: "/api/v1/sessions/:id/events",
    handler: async ({ services, params, query }) => {
      const { after } = EventsQuery.parse({ after: query.get("after") ?? undefined });
      await services.sessions.get(params.id);
      const events = await services.log.read(params.id, after);
      return events.map((event) => ({
        seq: event.seq,
        type: event.type,
        payload: event.payload,
        created_at: event.createdAt,
      }));
    },
  },
  {
    method: "GET",
    path: "/api/v1/fs/directories",
    handler: async ({ query }) => listDirectories(DirectoryQuery.parse({ path: query.get("path") ?? undefined }).path),
  },
];

function noWorktrees(): never {
  throw new WorldlineError("worktree:unavailable", "This bridge has no worktree sessions.");
}
