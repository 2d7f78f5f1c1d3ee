/**
 * Preview addresses: `p<port>-<session>.localhost:<bridge port>`. Browsers resolve
 * every `*.localhost` name to loopback, and each such name is an origin (and a site) of its own, so a
 * previewed app never shares cookies or storage with the IDE or with another preview.
 */
export interface PreviewTarget {
  sessionId: string;
  port: number;
}

/** What a preview host looks like: a label `p<port>-<session id>`, then `.localhost`. */
const PREVIEW_LABEL = /^p([0-9]{1,5})-([a-z0-9][a-z0-9_-]{0,62})$/;

/** The bridge's own loopback names; everything else under `.localhost` is a preview (or malformed). */
const BRIDGE_NAMES = new Set(["localhost"]);

/**
 * Whether a Host header names a preview origin of this bridge: `undefined` when it is not under
 * `.localhost` on the bridge's port (the IDE's own hosts and anything else go on to the normal
 * checks), `"malformed"` when it is but does not parse, else the session and port.
 */
export function parsePreviewHost(
  host: string | undefined,
  bridgePort: number,
): PreviewTarget | "malformed" | undefined {
  if (!host) return undefined;
  const lower = host.toLowerCase();
  const suffix = `.localhost:${bridgePort}`;
  if (!lower.endsWith(suffix)) return undefined;
  const label = lower.slice(0, -suffix.length);
  if (BRIDGE_NAMES.has(label)) return undefined;
  const match = PREVIEW_LABEL.exec(label);
  if (!match) return "malformed";
  const port = Number(match[1]);
  if (port < 1 || port > 65_535) return "malformed";
  return { port, sessionId: match[2] };
}

/** The preview origin of a session's port, as a browser opens it. */
export function previewOrigin(target: PreviewTarget, bridgePort: number): string {
  return `http://p${target.port}-${target.sessionId}.localhost:${bridgePort}`;
}

/** Whether a session id can be part of a host name (ids are cuids: lower-case letters and digits). */
export function previewableSession(sessionId: string): boolean {
  return PREVIEW_LABEL.test(`p1-${sessionId}`);
}
