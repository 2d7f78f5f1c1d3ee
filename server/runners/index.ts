/**
 * The hub's side of runners: enrollment, the runners' socket.io server, a WorkspaceHost per runner
 * session, and its previews (previews.ts: ports read by the runner, streams to its ports).
 */
export { RunnerHub } from "./hub";
export { LAST_SEEN_EVERY_MS } from "./limits";
