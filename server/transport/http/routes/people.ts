import * as z from "zod";
import {
  ApiTokenView,
  CreatedApiToken,
  SessionAccessView,
  UserView,
  MeView,
  MyBudgetView,
  CreateApiTokenBody,
  CreateUserBody,
  PutSessionAccessBody,
  UpdateUserBody,
  UserName,
} from "../../../protocol";
import { personOfRequest, requirePerson } from "../../people";
import { readJson } from "../io";
import type { Route } from "../router";

const people = ["people"];

/** People, their tokens and who may reach a session (hub only; who may call which is in server/people/policy.ts). */
export const peopleRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/v1/me",
    doc: {
      summary: "Who the request is: the signed-in person (null for the launch token) and whether this is a hub",
      tags: people,
      response: MeView,
    },
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
    doc: {
      summary: "Your personal API tokens (never the tokens themselves)",
      tags: people,
      response: z.array(ApiTokenView),
    },
    handler: async ({ req, services }) => services.people.listApiTokens(requirePerson(req).id),
  },
  {
    method: "POST",
    path: "/api/v1/me/tokens",
    doc: {
      summary: "Create a personal API token (Authorization: Bearer wlp_…); shown once",
      tags: people,
      body: CreateApiTokenBody,
      response: CreatedApiToken,
    },
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
    doc: { summary: "Revoke one of your personal API tokens (refused at once)", tags: people, response: ApiTokenView },
    handler: async ({ req, services, params }) => services.people.revokeApiToken(requirePerson(req).id, params.id),
  },
  {
    method: "GET",
    path: "/api/v1/me/budget",
    doc: {
      summary: "Your daily budget today (set by an admin), with what allows added and what your sessions spent",
      tags: people,
      response: MyBudgetView,
    },
    handler: async ({ req, services }) => services.people.budgetToday(requirePerson(req).id),
  },
  {
    method: "GET",
    path: "/api/v1/users",
    doc: { summary: "People on this hub (admin)", tags: people, response: z.array(UserView) },
    handler: async ({ services }) => services.people.listUsers(),
  },
  {
    method: "POST",
    path: "/api/v1/users",
    doc: { summary: "Add a person with a role and a password (admin)", tags: people, body: CreateUserBody },
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
    doc: {
      summary:
        "Change a person's role, password or daily budget (`budget_usd`, null for none), or disable them (admin)",
      tags: people,
      body: UpdateUserBody,
      response: UserView,
    },
    handler: async ({ req, services, params }) =>
      services.people.updateUser(UserName.parse(params.name), UpdateUserBody.parse(await readJson(req))),
  },
  {
    method: "GET",
    path: "/api/v1/sessions/:id/access",
    doc: {
      summary: "Who may reach this session: its owner and its shares",
      tags: people,
      response: z.array(SessionAccessView),
    },
    handler: async ({ services, params }) => {
      await services.sessions.get(params.id);
      return services.people.listAccess(params.id);
    },
  },
  {
    method: "PUT",
    path: "/api/v1/sessions/:id/access",
    doc: {
      summary: "Share this session with a person or everyone, to view or to drive (owner or admin)",
      tags: people,
      body: PutSessionAccessBody,
      response: z.array(SessionAccessView),
    },
    handler: async ({ req, services, params }) => {
      const body = PutSessionAccessBody.parse(await readJson(req));
      await services.sessions.get(params.id);
      return services.people.share(params.id, body.subject, body.access);
    },
  },
  {
    method: "DELETE",
    path: "/api/v1/sessions/:id/access",
    doc: {
      summary: "Stop sharing this session with a person or everyone (`?subject=`)",
      tags: people,
      response: z.array(SessionAccessView),
    },
    handler: async ({ services, params, query }) => {
      const subject = z.union([z.literal("everyone"), UserName]).parse(query.get("subject") ?? undefined);
      await services.sessions.get(params.id);
      return services.people.unshare(params.id, subject);
    },
  },
];
