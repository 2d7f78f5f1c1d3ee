import * as z from "zod";
import { WorldlineError } from "../errors";

/** A proxy variable as curl reads it: a URL, or a bare `host:port` meaning http://host:port. */
const ProxyUrl = z
  .string()
  .transform((value) => (/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`))
  .pipe(
    z
      .string()
      .url()
      .refine((value) => /^https?:/i.test(value), "must be an http:// or https:// proxy URL"),
  )
  .transform((value) => new URL(value));

/** The conventional proxy variables; the lower-case spelling wins where both are set, as in curl. */
const ProxyEnvSchema = z.object({
  https_proxy: ProxyUrl.optional(),
  HTTPS_PROXY: ProxyUrl.optional(),
  http_proxy: ProxyUrl.optional(),
  HTTP_PROXY: ProxyUrl.optional(),
  no_proxy: z.string().optional(),
  NO_PROXY: z.string().optional(),
});

/** Where model requests go through a proxy: one per scheme, and the hosts that bypass both. */
export interface ProxyEnv {
  https?: URL;
  http?: URL;
  /** NO_PROXY's entries, lower-case: `*`, a host or domain (with or without a leading dot), optionally `:port`. */
  bypass: string[];
}

/** Reads and validates the proxy variables; throws a WorldlineError naming a bad one. */
export function proxyEnv(env: Record<string, string | undefined> = process.env): ProxyEnv {
  const set = Object.fromEntries(Object.entries(env).filter((entry) => !!entry[1]));
  const parsed = ProxyEnvSchema.safeParse(set);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ");
    throw new WorldlineError("config:invalid_env", `Invalid environment: ${problems}`);
  }
  const e = parsed.data;
  return {
    https: e.https_proxy ?? e.HTTPS_PROXY,
    http: e.http_proxy ?? e.HTTP_PROXY,
    bypass: (e.no_proxy ?? e.NO_PROXY ?? "")
      .split(/[\s,]+/)
      .map((entry) => entry.trim().toLowerCase())
      .filter(Boolean),
  };
}

/** The proxy a request to `target` goes through, or undefined when none applies (NO_PROXY, or no variable for its scheme). */
export function proxyFor(target: URL, proxies: ProxyEnv): URL | undefined {
  const proxy = target.protocol === "https:" ? proxies.https : proxies.http;
  if (!proxy) return undefined;
  const host = target.hostname.toLowerCase().replace(/^\[|\]$/g, "");
  const port = target.port || (target.protocol === "https:" ? "443" : "80");
  const bypassed = proxies.bypass.some((entry) => {
    if (entry === "*") return true;
    const [name, entryPort] = hostAndPort(entry);
    if (entryPort && entryPort !== port) return false;
    const domain = name.replace(/^\*?\./, "");
    return host === domain || host.endsWith(`.${domain}`);
  });
  return bypassed ? undefined : proxy;
}

/** `host`, `host:port`, `[v6]:port`, or a bare IPv6 address (its colons are not a port). */
function hostAndPort(entry: string): [string, string | undefined] {
  const bracketed = /^\[(.+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return [bracketed[1], bracketed[2]];
  const parts = entry.split(":");
  return parts.length === 2 ? [parts[0], parts[1]] : [entry, undefined];
}
