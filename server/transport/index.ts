export { createAuthPolicy, createToken } from "./auth";
export { createRequestHandler } from "./http";
export { attachSocketServer } from "./socket";
export type { BridgeServices } from "./services";
