import { z } from "zod";
import {
  CreateApiTokenBody,
  CreateUserBody,
  PutSessionAccessBody,
  UpdateUserBody,
  UserName,
  type MeView,
} from "../../../protocol";
import { personOfRequest, requirePerson } from "../../people";
import { readJson } from "../io";
import type { Route } from "../router";

/** People, their tokens and who may reach a session (hub only; who may call which is in server/people/policy.ts). */
export const peopleRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/v1/me",
    handler: async ({ req, services }): Promise<MeView> => {
      const person = personOfRequest(req);
      return {
        person: person ? { name: person.name, display_name: person.displayName, role: person.role } : null,
        people: await services.people.enabled(),
      };
    },
  },
  {
    method: "GET",
    path: "/api/v1/me/tokens",
    handler: async ({ req, services }) => services.people.listApiTokens(requirePerson(req).id),
  },
  {
    method: "POST",
    path: "/api/v1/me/tokens",
    status: 201,
    handler: async ({ req, services }) => {
      const person = requirePerson(req);
      const body = CreateApiTokenBody.parse(await readJson(req));
      return services.people.createApiToken(person.id, { name: body.name, expiresInSeconds: body.expires_in });
    },
  },
  {
    method: "DELETE",
    path: "/api/v1/me/tokens/:id",
    handler: async ({ req, services, params }) => services.people.revokeApiToken(requirePerson(req).id, params.id),
  },
  { method: "GET", path: "/api/v1/users", handler: async ({ services }) => services.people.listUsers() },
  {
    method: "POST",
    path: "/api/v1/users",
    status: 201,
    handler: async ({ req, services }) => {
      const body = CreateUserBody.parse(await readJson(req));
      return services.people.addUser({
        name: body.name,
        role: body.role,
        password: body.password,
        displayName: body.display_name,
      });
    },
  },
  {
    method: "PATCH",
    path: "/api/v1/users/:name",
    handler: async ({ req, services, params }) =>
      services.people.updateUser(UserName.parse(params.name), UpdateUserBody.parse(await readJson(req))),
  },
  {
    method: "GET",
    path: "/api/v1/sessions/:id/access",
    handler: async ({ services, params }) => {
      await services.sessions.get(params.id);
      return services.people.listAccess(params.id);
    },
  },
  {
    method: "PUT",
    path: "/api/v1/sessions/:id/access",
    handler: async ({ req, services, params }) => {
      const body = PutSessionAccessBody.parse(await readJson(req));
      await services.sessions.get(params.id);
      return services.people.share(params.id, body.subject, body.access);
    },
  },
  {
    method: "DELETE",
    path: "/api/v1/sessions/:id/access",
    handler: async ({ services, params, query }) => {
      const subject = z.union([z.literal("everyone"), UserName]).parse(query.get("subject") ?? undefined);
      await services.sessions.get(params.id);
      return services.people.unshare(params.id, subject);
    },
  },
];
