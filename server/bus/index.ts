import type { RedisLink } from "./redis-link";

export { LocalBus } from "./local";
export type { RedisLink } from "./redis-link";
export type { LogBus } from "./types";

/**
 * Team mode's Redis link. ioredis and socket.io's Redis adapter (~150 ms to load) are loaded
 * only here: a bridge without REDIS_URL never needs them.
 */
export async function connectRedis(url: string, prefix: string): Promise<RedisLink> {
  return (await import("./redis-link")).connectRedis(url, prefix);
}
