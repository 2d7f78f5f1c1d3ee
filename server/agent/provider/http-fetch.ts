import http from "node:http";
import https from "node:https";
import { Readable } from "node:stream";
import { proxyFor, type ProxyEnv } from "../../config/proxy";

/** Statuses whose Response has no body (the fetch standard's null body statuses). */
const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

/** CONNECT tunnels for https targets, one keep-alive agent per proxy: connections are reused between steps. */
const tunnels = new Map<string, Promise<http.Agent>>();

/**
 * The `fetch` the SDK is given: node:http with Node's keep-alive agents, honouring HTTPS_PROXY,
 * HTTP_PROXY and NO_PROXY. Node 20's own fetch ignores those variables, and undici (whose ProxyAgent
 * would honour them) is not installed; https-proxy-agent is, and tunnels an https target through
 * the proxy with CONNECT. An http target goes to the proxy as an absolute-URL request, as any
 * forward proxy expects.
 */
export function httpFetch(proxies: ProxyEnv): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  return async (input, init = {}) => {
    if (input instanceof Request) throw new TypeError("httpFetch takes a URL and its RequestInit, not a Request.");
    const target = new URL(input);
    const proxy = proxyFor(target, proxies);
    const headers: http.OutgoingHttpHeaders = Object.fromEntries(new Headers(init.headers));
    const body = init.body ?? undefined;
    if (body !== undefined && typeof body !== "string" && !(body instanceof Uint8Array))
      throw new TypeError("httpFetch sends only string or byte bodies.");
    const method = init.method ?? "GET";
    const signal = init.signal ?? undefined;
    if (target.protocol === "https:") {
      const agent = proxy ? await tunnelThrough(proxy) : https.globalAgent;
      return send(https.request(target, { method, headers, agent, signal }), body);
    }
    if (!proxy) return send(http.request(target, { method, headers, signal }), body);
    const forwarded = { ...headers, host: target.host, ...proxyAuthorization(proxy) };
    const request = http.request({
      protocol: "http:",
      hostname: proxy.hostname,
      port: proxy.port || 80,
      path: target.href,
      method,
      headers: forwarded,
      signal,
    });
    return send(request, body);
  };
}

/** Sends the body; resolves with the response once its headers arrive, its body a web stream over the socket. */
function send(request: http.ClientRequest, body: string | Uint8Array | undefined): Promise<Response> {
  return new Promise((resolve, reject) => {
    request.once("response", (response) => {
      const status = response.statusCode ?? 0;
      const headers = new Headers();
      for (const [name, value] of Object.entries(response.headers)) {
        for (const one of [value ?? []].flat()) headers.append(name, one);
      }
      if (NULL_BODY_STATUS.has(status)) response.resume();
      const stream = NULL_BODY_STATUS.has(status) ? null : (Readable.toWeb(response) as ReadableStream<Uint8Array>);
      resolve(new Response(stream, { status, statusText: response.statusMessage, headers }));
    });
    request.once("error", reject);
    request.end(body);
  });
}

/** The keep-alive CONNECT agent for one proxy, loaded on first use (most set-ups have no proxy). */
function tunnelThrough(proxy: URL): Promise<http.Agent> {
  let agent = tunnels.get(proxy.href);
  if (!agent) {
    agent = import("https-proxy-agent").then(({ HttpsProxyAgent }) => new HttpsProxyAgent(proxy, { keepAlive: true }));
    tunnels.set(proxy.href, agent);
  }
  return agent;
}

/** Basic credentials for a proxy URL that carries them (`http://user:pass@proxy:3128`). */
function proxyAuthorization(proxy: URL): http.OutgoingHttpHeaders {
  if (!proxy.username) return {};
  const credentials = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
  return { "proxy-authorization": `Basic ${Buffer.from(credentials).toString("base64")}` };
}
