import { ApprovalsQuery, CreateRuleBody, DecideApprovalBody, RulesQuery } from "../../../protocol";
import { WorldlineError } from "../../../errors";
import { readJson } from "../io";
import { deciderOfRequest, visibleSessions } from "../../people";
import type { Route } from "../router";

/** The approval queue and the rules over HTTP (the public API: server/transport/http/openapi-docs.ts). */
export const approvalRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/v1/approvals",
    handler: async ({ services, query, req }) => {
      const approvals = await services.approvals.list(ApprovalsQuery.parse(Object.fromEntries(query)));
      const visible = await visibleSessions(req, services);
      return visible ? approvals.filter((approval) => visible.has(approval.session_id)) : approvals;
    },
  },
  {
    method: "GET",
    path: "/api/v1/approvals/:id",
    handler: async ({ services, params }) => services.approvals.get(params.id),
  },
  {
    method: "POST",
    path: "/api/v1/approvals/:id",
    handler: async ({ services, params, req }) => {
      const body = DecideApprovalBody.parse(await readJson(req));
      return services.approvals.decide(params.id, {
        ...body,
        decidedBy: deciderOfRequest(req, services, "http"),
      });
    },
  },
  {
    method: "GET",
    path: "/api/v1/rules",
    handler: async ({ services, query, req }) => {
      const { session_id } = RulesQuery.parse(Object.fromEntries(query));
      // A session's rules are the session's: one the person cannot see is a 404, as its own routes answer.
      const visible = await visibleSessions(req, services);
      if (session_id && visible && !visible.has(session_id))
        throw new WorldlineError("session:not_found", "No session with that id.");
      const rules = await services.approvals.rules.list({ sessionId: session_id });
      return visible ? rules.filter((rule) => !rule.session_id || visible.has(rule.session_id)) : rules;
    },
  },
  {
    method: "POST",
    path: "/api/v1/rules",
    status: 201,
    handler: async ({ services, req }) => services.approvals.rules.create(CreateRuleBody.parse(await readJson(req))),
  },
  {
    method: "DELETE",
    path: "/api/v1/rules/:id",
    handler: async ({ services, params }) => {
      await services.approvals.rules.remove(params.id);
      return { deleted: true };
    },
  },
];
