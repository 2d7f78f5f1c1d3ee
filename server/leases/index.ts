export { SessionClaims } from "./claims";
export { OwnerLease } from "./lease";
export type { LeaseOptions } from "./lease";
export { sweepOrphans } from "./sweep";
