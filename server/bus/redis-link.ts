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
  /** Whether every connection is up now (calls to other bridges fail fast with `bus:unavailable` otherwise). */
  available(): boolean;
  close(): Promise<void>;
}

/** Logs Redis going away and coming back once per change, not once per reconnect attempt. */
class RedisState {
  private readonly down = new Map<number, number>();

  failed(connection: number, error: Error): void {
    if (this.down.size === 0)
      console.error(`[worldline] redis unreachable (${error.message}); reconnecting with backoff`);
    if (!this.down.has(connection)) this.down.set(connection, Date.now());
  }

  ready(connection: number): void {
    const since = this.down.get(connection);
    if (since === undefined) return;
    this.down.delete(connection);
    if (this.down.size === 0)
      console.error(`[worldline] redis reachable again after ${((Date.now() - since) / 1000).toFixed(1)} s`);
  }
}

/** Connects (and waits until Redis answers, so a wrong REDIS_URL fails the start, not the first turn). */
export async function connectRedis(url: string, prefix: string): Promise<RedisLink> {
  const connections = Array.from({ length: 4 }, () => new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 3 }));
  const state = new RedisState();
  for (const [index, connection] of connections.entries()) {
    // Without a handler ioredis reports every failed reconnect as "Unhandled error event"; it reconnects by itself.
    connection.on("error", (error: Error) => state.failed(index, error));
    connection.on("ready", () => state.ready(index));
  }
  await Promise.all(connections.map((connection) => connection.connect()));
  const [busPub, busSub, ioPub, ioSub] = connections;
  return {
    prefix,
    bus: new RedisBus(busPub, busSub, prefix),
    adapter: createAdapter(ioPub, ioSub, { key: `${prefix}:io` }),
    pub: busPub,
    sub: busSub,
    available: () => connections.every((connection) => connection.status === "ready"),
    async close() {
      // A connection that cannot quit politely (already down) is dropped.
      await Promise.all(connections.map((connection) => connection.quit().catch(() => connection.disconnect())));
    },
  };
}
