export { SessionClaims } from "./claims";
export { TurnFence } from "./fence";
export { OwnerLease } from "./lease";
export type { LeaseOptions, Liveness } from "./lease";
export { sweepOrphans } from "./sweep";
