import * as z from "zod";
import type { TranscriptItem, TranscriptState } from "./transcript";

/**
 * Live sync beyond the event log itself: the compact snapshot a new tab starts from,
 * presence (ephemeral, per session room) and share links.
 */

/**
 * A folded transcript as sent to a new tab. `checkpointViews` would repeat the items
 * once per checkpoint, so a view that is a prefix of the current items travels as its
 * length only.
 */
export interface TranscriptSnapshot {
  state: Omit<TranscriptState, "checkpointViews">;
  checkpointPrefixes: Record<string, number>;
  checkpointViews: Record<string, TranscriptItem[]>;
}

export const TranscriptSnapshot = z.object({
  state: z.object({ lastSeq: z.number().int().min(0), items: z.array(z.unknown()) }).passthrough(),
  checkpointPrefixes: z.record(z.string(), z.number().int().min(0)),
  checkpointViews: z.record(z.string(), z.array(z.unknown())),
});

export function encodeSnapshot(state: TranscriptState): TranscriptSnapshot {
  const { checkpointViews = {}, ...rest } = state;
  const checkpointPrefixes: Record<string, number> = {};
  const views: Record<string, TranscriptItem[]> = {};
  for (const [id, view] of Object.entries(checkpointViews)) {
    if (isPrefix(view, state.items)) checkpointPrefixes[id] = view.length;
    else views[id] = view;
  }
  return { state: rest, checkpointPrefixes, checkpointViews: views };
}

export function decodeSnapshot(snapshot: TranscriptSnapshot): TranscriptState {
  const { state, checkpointPrefixes, checkpointViews } = snapshot;
  const views: Record<string, TranscriptItem[]> = { ...checkpointViews };
  for (const [id, length] of Object.entries(checkpointPrefixes)) views[id] = state.items.slice(0, length);
  return Object.keys(views).length > 0 ? { ...state, checkpointViews: views } : { ...state };
}

function isPrefix(view: readonly TranscriptItem[], items: readonly TranscriptItem[]): boolean {
  if (view.length > items.length) return false;
  for (let i = 0; i < view.length; i++) if (view[i] !== items[i]) return false;
  return true;
}

/** One tab (socket) looking at a session. */
export const PresenceViewer = z.object({
  id: z.string(),
  /** "desktop" | "phone", from the user agent: enough to tell tabs apart at a glance. */
  device: z.enum(["desktop", "phone", "other"]),
  /** Owner tabs act with the launch token; shared ones through a link of this scope. */
  access: z.enum(["owner", "view", "drive"]),
  typing: z.boolean(),
});
export type PresenceViewer = z.infer<typeof PresenceViewer>;

export const PresenceState = z.object({
  sessionId: z.string(),
  viewers: z.array(PresenceViewer),
  /** The viewer whose prompt started the running turn, when it is still connected. */
  runningBy: z.string().nullable(),
  /** The receiving tab's own viewer id. */
  you: z.string(),
});
export type PresenceState = z.infer<typeof PresenceState>;

export const presenceCommands = {
  /** "I am typing" (true) or "I stopped" (false); the bridge also expires it. */
  "presence.typing": z
    .object({
      commandId: z.string().min(8).max(64).optional(),
      sessionId: z.string().min(1).max(64),
      typing: z.boolean(),
    })
    .strict(),
} as const;

export const ShareScope = z.enum(["view", "drive"]);
export type ShareScope = z.infer<typeof ShareScope>;

/** Longest a link may live: a shared session is not meant to stay open forever. */
export const MAX_SHARE_EXPIRY_SECONDS = 30 * 24 * 3600;

export const CreateShareLinkBody = z
  .object({
    scope: ShareScope,
    /** Seconds from now; default one day. */
    expires_in: z
      .number()
      .int()
      .min(60)
      .max(MAX_SHARE_EXPIRY_SECONDS)
      .default(24 * 3600),
  })
  .strict();
export type CreateShareLinkBody = z.infer<typeof CreateShareLinkBody>;

export const ShareLinkView = z.object({
  id: z.string(),
  session_id: z.string(),
  scope: ShareScope,
  created_at: z.string(),
  expires_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  active: z.boolean(),
});
export type ShareLinkView = z.infer<typeof ShareLinkView>;

/** Only the creation answer carries the token (and the URL built from it); the bridge keeps a hash. */
export const CreatedShareLink = ShareLinkView.extend({
  token: z.string(),
  path: z.string(),
  /** Full URLs for other devices; empty unless the bridge was started with WORLDLINE_ALLOW_LAN=1. */
  lan_urls: z.array(z.string()).optional(),
});
export type CreatedShareLink = z.infer<typeof CreatedShareLink>;

/** What the current request may do: the owner everything, a share link one session. */
export const AccessView = z.object({
  access: z.enum(["owner", "view", "drive"]),
  session_id: z.string().nullable(),
});
export type AccessView = z.infer<typeof AccessView>;
