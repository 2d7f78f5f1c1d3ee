export { LocalBus } from "./local";
export { connectRedis } from "./redis-link";
export type { RedisLink } from "./redis-link";
export type { LogBus } from "./types";
