import type { IncomingMessage, ServerResponse } from "node:http";
import type { ZodType } from "zod";
import { WorldlineError } from "../../errors";
import type { BridgeServices } from "../services";
import { sendError, sendJson } from "./io";

export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  params: Record<string, string>;
  query: URLSearchParams;
  services: BridgeServices;
}

/** A handler returns a JSON body (sent with `status`, default 200) or handles `res` itself (SSE) and returns undefined. */
export type RouteHandler = (ctx: RouteContext) => Promise<unknown>;

export interface Route {
  method: "GET" | "POST" | "PATCH" | "DELETE" | "PUT";
  path: string;
  handler: RouteHandler;
  status?: number;
  /** What GET /api/v1/openapi.json says about it (server/transport/http/openapi.ts); routes without it are described from its table. */
  doc?: RouteDoc;
}

/** The zod schemas a route validates with, reused for its OpenAPI description. */
export interface RouteDoc {
  summary: string;
  tags?: string[];
  body?: ZodType;
  query?: ZodType;
  response?: ZodType;
  /** The response is an SSE stream of the public event vocabulary. */
  sse?: boolean;
}

interface CompiledRoute extends Route {
  pattern: RegExp;
  keys: string[];
}

/** A small method + path router for /api/v1; paths use `:name` segments. */
export class Router {
  private readonly routes: CompiledRoute[] = [];

  add(...routes: Route[]): this {
    for (const route of routes) {
      const keys: string[] = [];
      const source = route.path.replace(/:([a-zA-Z_]+)/g, (_match, key: string) => {
        keys.push(key);
        return "([^/]+)";
      });
      this.routes.push({ ...route, keys, pattern: new RegExp(`^${source}/?$`) });
    }
    return this;
  }

  list(): readonly Route[] {
    return this.routes;
  }

  async handle(req: IncomingMessage, res: ServerResponse, url: URL, services: BridgeServices): Promise<void> {
    try {
      let pathMatched = false;
      for (const route of this.routes) {
        const match = route.pattern.exec(url.pathname);
        if (!match) continue;
        pathMatched = true;
        if (route.method !== req.method) continue;
        const params = Object.fromEntries(route.keys.map((key, i) => [key, decodeParam(match[i + 1])]));
        const body = await route.handler({ req, res, params, query: url.searchParams, services });
        if (body !== undefined && !res.headersSent) sendJson(res, route.status ?? 200, body);
        return;
      }
      if (pathMatched)
        throw new WorldlineError("request:method_not_allowed", `${req.method} is not supported on ${url.pathname}.`);
      throw new WorldlineError("route:not_found", `No API route ${req.method} ${url.pathname}.`);
    } catch (error) {
      if (error instanceof WorldlineError && error.kind === "method_not_allowed") {
        sendJson(res, 405, { error: { code: error.code, message: error.message } });
        return;
      }
      sendError(res, error);
    }
  }
}

/** A malformed escape (`%E0%A4%A`) in a path segment is the client's mistake, not a 500. */
function decodeParam(raw: string): string {
  try {
    // A decoded lone surrogate is impossible (decodeURIComponent throws on one), so this covers params.
    return decodeURIComponent(raw);
  } catch {
    throw new WorldlineError("request:invalid", `Malformed percent-encoding in the path: ${raw.slice(0, 100)}`);
  }
}
