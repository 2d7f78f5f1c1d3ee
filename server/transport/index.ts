export { createAuthPolicy, createToken } from "./auth";
export type { AuthPolicy } from "./auth";
export { createApiRouter, createRequestHandler } from "./http";
export { attachSocketServer } from "./socket";
export type { BridgeServices } from "./services";
export { toWireError } from "./errors";
