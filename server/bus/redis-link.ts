import { createAdapter } from "@socket.io/redis-adapter";
import { Redis } from "ioredis";
import { RedisBus } from "./redis";

/** What a bridge in team mode holds on Redis: the log bus and socket.io's adapter, each on its own connections. */
export interface RedisLink {
  prefix: string;
  bus: RedisBus;
  /** For `io.adapter(...)`: rooms span every bridge of the deployment. */
  adapter: ReturnType<typeof createAdapter>;
  /** A publishing and a subscribed connection for other cross-bridge messages (server/bus/forward.ts). */
  pub: Redis;
  sub: Redis;
  close(): Promise<void>;
}

/** Connects (and waits until Redis answers, so a wrong REDIS_URL fails the start, not the first turn). */
export async function connectRedis(url: string, prefix: string): Promise<RedisLink> {
  const connections = Array.from({ length: 4 }, () => new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 3 }));
  await Promise.all(connections.map((connection) => connection.connect()));
  const [busPub, busSub, ioPub, ioSub] = connections;
  return {
    prefix,
    bus: new RedisBus(busPub, busSub, prefix),
    adapter: createAdapter(ioPub, ioSub, { key: `${prefix}:io` }),
    pub: busPub,
    sub: busSub,
    async close() {
      await Promise.all(connections.map((connection) => connection.quit().catch(() => connection.disconnect())));
    },
  };
}
