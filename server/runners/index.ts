/** The hub's side of runners: enrollment, the runners' socket.io server, and a WorkspaceHost per runner session. */
export { RunnerHub } from "./hub";
export { LAST_SEEN_EVERY_MS } from "./limits";
