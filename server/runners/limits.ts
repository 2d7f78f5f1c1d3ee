/** How long a tool call waits for its runner to come back before it fails; tests shorten it (WORLDLINE_RUNNER_GRACE_MS). */
export const RUNNER_GRACE_MS = 30_000;

/**
 * The largest frame a runner may send (a read page, a search result, a file for str_replace): far above
 * what a tool returns after its own caps, far below what would hurt the hub. Bigger frames close the connection.
 */
export const RUNNER_MAX_FRAME_BYTES = 16 * 1024 * 1024;

/** How often a bridge looks for runners revoked by another process (`worldline runners revoke`). */
export const REVOCATION_CHECK_MS = 1_000;

/** How often a connected runner's last_seen is written. */
export const LAST_SEEN_EVERY_MS = 15_000;

/** Requests waiting for an answer per runner; more means a stuck runner or a runaway caller. */
export const MAX_PENDING_PER_RUNNER = 10_000;

/** Refused runner frames logged per runner per window; the rest are counted in one line. */
export const REFUSALS_LOGGED_PER_WINDOW = 10;
export const REFUSAL_LOG_WINDOW_MS = 60_000;

/**
 * Malformed frames one runner connection may send per window before the hub closes it: a runner of
 * this version sends none, so this is a hostile or broken one filling the hub's log and CPU.
 */
export const MALFORMED_FRAMES_PER_WINDOW = 20;
export const MALFORMED_WINDOW_MS = 10_000;
