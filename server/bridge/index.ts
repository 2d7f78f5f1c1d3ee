/** The bridge's parts wired together: with an HTTP server (server/main.ts) or without one (print mode). */
export { reportConsistency, thisMachine } from "./core";
export { startHeadless } from "./headless";
export type { BridgeOptions } from "./options";
export { closeStorage, openParts, stopParts, type Parts } from "./parts";
