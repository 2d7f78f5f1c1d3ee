import { ApprovalsQuery, CreateRuleBody, DecideApprovalBody, RulesQuery } from "../../../protocol";
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
    handler: async ({ services, query }) => {
      const { session_id } = RulesQuery.parse(Object.fromEntries(query));
      return services.approvals.rules.list({ sessionId: session_id });
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
