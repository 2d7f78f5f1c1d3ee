export { HEARTBEAT_MS, LEASE_TTL_MS, OwnerLease } from "./lease";
export type { LeaseOptions } from "./lease";
export { sweepOrphans } from "./sweep";
