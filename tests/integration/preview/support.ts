import { spawn, type ChildProcess } from "node:child_process";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const DEV_SERVER = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "fixtures",
  "preview",
  "dev-server.mjs",
);

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * A request to the bridge at 127.0.0.1 with a Host of our choosing: `*.localhost` does not
 * resolve outside a browser here (glibc does not resolve it; Chromium does).
 */
export function hostRequest(
  bridgePort: number,
  host: string,
  pathname: string,
  headers: Record<string, string> = {},
  method = "GET",
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port: bridgePort, path: pathname, method, headers: { host, ...headers }, agent: false },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** What a WebSocket upgrade to the bridge under a Host gets, when it is refused: the status line's code. */
export function upgradeStatus(
  bridgePort: number,
  host: string,
  pathname: string,
  headers: Record<string, string> = {},
) {
  return new Promise<number>((resolve, reject) => {
    const req = http.request({
      host: "127.0.0.1",
      port: bridgePort,
      path: pathname,
      agent: false,
      headers: {
        host,
        connection: "Upgrade",
        upgrade: "websocket",
        "sec-websocket-version": "13",
        "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
        ...headers,
      },
    });
    req.on("response", (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("upgrade", (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

/** A process the test started, ended by its pid at the end. */
export function startProcess(command: string, args: string[], cwd: string): ChildProcess {
  return spawn(command, args, { cwd, stdio: "ignore" });
}
