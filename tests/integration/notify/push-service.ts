import { createECDH, randomBytes, type ECDH } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import ece from "http_ece";

/** A browser's side of one subscription: the key pair and secret the test made. */
export interface Device {
  endpoint: string;
  keys: { p256dh: string; auth: string };
  ecdh: ECDH;
  /** What the push service answers for this device: a status, or "hang" (never answers). */
  answer: number | "hang";
}

export interface Received {
  device: string;
  /** The decrypted payload, parsed. */
  notice: Record<string, unknown>;
  headers: http.IncomingHttpHeaders;
}

/**
 * A push service on loopback: it takes each push like FCM or Mozilla's would, checks the VAPID
 * header is there, and decrypts the body (RFC 8291, aes128gcm) with the keys the test generated,
 * so the bridge's encryption is checked for real.
 */
export class PushService {
  readonly received: Received[] = [];
  /** Requests the service took, answered or not (a hanging device counts each try). */
  readonly attempts = new Map<string, number>();
  private readonly devices = new Map<string, Device>();
  private readonly hanging = new Set<http.ServerResponse>();
  private url = "";

  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const name = decodeURIComponent((req.url ?? "").replace(/^\/push\//, ""));
      const device = this.devices.get(name);
      this.attempts.set(name, (this.attempts.get(name) ?? 0) + 1);
      if (!device) return void res.writeHead(404).end();
      if (device.answer === "hang") return void this.hanging.add(res);
      if (device.answer >= 200 && device.answer < 300) {
        const plain = ece.decrypt(Buffer.concat(chunks), {
          version: "aes128gcm",
          privateKey: device.ecdh,
          authSecret: Buffer.from(device.keys.auth, "base64url"),
        });
        this.received.push({ device: name, notice: JSON.parse(plain.toString("utf8")), headers: req.headers });
      }
      res.writeHead(device.answer).end();
    });
  });

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** A new subscription, as `PushSubscription.toJSON()` would give it. */
  device(name: string, answer: Device["answer"] = 201): Device {
    const ecdh = createECDH("prime256v1");
    ecdh.generateKeys();
    const device: Device = {
      endpoint: `${this.url}/push/${encodeURIComponent(name)}`,
      keys: { p256dh: ecdh.getPublicKey("base64url"), auth: randomBytes(16).toString("base64url") },
      ecdh,
      answer,
    };
    this.devices.set(name, device);
    return device;
  }

  of(name: string): Record<string, unknown>[] {
    return this.received.filter((entry) => entry.device === name).map((entry) => entry.notice);
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A webhook receiver: every JSON body it was sent, after failing the first `failFirst` tries. */
export async function startWebhook(failFirst = 0): Promise<{ url: string; bodies: unknown[]; close(): Promise<void> }> {
  const bodies: unknown[] = [];
  let failures = 0;
  const server = http.createServer((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    req.on("end", () => {
      if (failures < failFirst) {
        failures += 1;
        return void res.writeHead(503).end();
      }
      bodies.push(JSON.parse(text));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    bodies,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
