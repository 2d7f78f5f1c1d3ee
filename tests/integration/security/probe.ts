import http from "node:http";
import { createApiRouter } from "../../../server/transport/http";

/** A raw HTTP request with any headers (fetch refuses to set Host and Origin). */
export interface ProbeResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** True when the server switched protocols (a websocket upgrade went through). */
  upgraded: boolean;
}

export const probeCount = { value: 0 };

export function probe(
  port: number,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<ProbeResult> {
  probeCount.value += 1;
  return new Promise((resolve, reject) => {
    const headers = { ...options.headers };
    // DELETE/GET bodies are neither chunked nor sized by Node's client: say the length.
    if (options.body !== undefined) headers["content-length"] = String(Buffer.byteLength(options.body));
    const req = http.request({
      host: "127.0.0.1",
      port,
      method: options.method ?? "GET",
      path: options.path,
      headers,
      setHost: false,
      agent: false,
    });
    req.on("upgrade", (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body: "", upgraded: true });
    });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString("utf8"),
          upgraded: false,
        }),
      );
      // SSE routes may stream; what matters is the status.
      setTimeout(() => res.destroy(), 2_000).unref();
      res.on("close", () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString("utf8"),
          upgraded: false,
        }),
      );
    });
    req.on("error", (error: NodeJS.ErrnoException) => {
      // A destroyed socket (refused upgrade) is an answer too.
      if (error.code === "ECONNRESET" || error.message === "socket hang up")
        resolve({ status: 0, headers: {}, body: "", upgraded: false });
      else reject(error);
    });
    req.end(options.body);
  });
}

/** Every API route with its `:params` filled in. */
export function apiRoutes(params: Record<string, string> = {}): { method: string; path: string; template: string }[] {
  return createApiRouter()
    .list()
    .map((route) => ({
      method: route.method,
      template: route.path,
      path: route.path.replace(/:([a-zA-Z_]+)/g, (_m, key: string) => encodeURIComponent(params[key] ?? `x-${key}`)),
    }));
}
