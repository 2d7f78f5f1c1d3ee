import * as z from "zod";
import type { ZodType } from "zod";
import { WireError } from "../../protocol";
import { DOCS, SSE_EVENT_NAMES, SseEvent, type JsonSchema } from "./openapi-docs";
import type { Route, RouteDoc } from "./router";

/** An OpenAPI 3.1 document for every route of the router, from the zod schemas the routes validate with. */
export function buildOpenApi(routes: readonly Route[], version: string): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const doc = route.doc ?? DOCS[`${route.method} ${route.path}`];
    const openPath = route.path.replace(/:([a-zA-Z_]+)/g, "{$1}");
    paths[openPath] ??= {};
    paths[openPath][route.method.toLowerCase()] = operation(route, doc);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Worldline API",
      version,
      description:
        "HTTP + SSE API of the Worldline bridge. Every route except GET /api/v1/health needs `Authorization: Bearer <token>`.",
    },
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: { Error: toSchema(z.object({ error: WireError }), "output"), SseEvent: toSchema(SseEvent, "output") },
    },
    security: [{ bearer: [] }],
    paths,
  };
}

function operation(route: Route, doc: RouteDoc | undefined): JsonSchema {
  const pathParams = [...route.path.matchAll(/:([a-zA-Z_]+)/g)].map((match) => ({
    name: match[1],
    in: "path",
    required: true,
    schema: { type: "string" },
  }));
  const queryParams = doc?.query ? queryParameters(doc.query) : [];
  const status = String(route.status ?? 200);
  const success = doc?.sse
    ? {
        description: `An SSE stream; each \`data:\` line is one JSON object with task_id. Events: ${SSE_EVENT_NAMES.join(", ")}.`,
        content: { "text/event-stream": { schema: { $ref: "#/components/schemas/SseEvent" } } },
      }
    : {
        description: "OK",
        content: { "application/json": { schema: doc?.response ? toSchema(doc.response, "output") : {} } },
      };
  return {
    operationId: `${route.method.toLowerCase()}${route.path.replace(/^\/api\/v1/, "").replace(/[/:_-]+(\w)/g, (_m, c: string) => c.toUpperCase())}`,
    summary: doc?.summary ?? `${route.method} ${route.path}`,
    tags: doc?.tags ?? [],
    ...(route.path === "/api/v1/health" ? { security: [] } : {}),
    parameters: [...pathParams, ...queryParams],
    ...(doc?.body
      ? { requestBody: { required: true, content: { "application/json": { schema: toSchema(doc.body, "input") } } } }
      : {}),
    responses: {
      [status]: success,
      default: {
        description: "An error",
        content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
      },
    },
  };
}

function queryParameters(schema: ZodType): JsonSchema[] {
  const json = toSchema(schema, "input");
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: "query",
    required: required.has(name) && property.default === undefined,
    ...(typeof property.description === "string" ? { description: property.description } : {}),
    schema: property,
  }));
}

function toSchema(schema: ZodType, io: "input" | "output"): JsonSchema {
  const json = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as JsonSchema;
  delete json.$schema;
  return json;
}
