"use client";

import { useCallback, useEffect, useState } from "react";
import * as z from "zod";
import { PushDevice, PushDevices as PushDeviceList, PushKey } from "@/server/protocol";
import { api } from "@/components/transport/client";

/** Whether this browser can get pushes at all (a service worker, the Push API, notifications). */
function pushSupported(): boolean {
  return (
    typeof window !== "undefined" && "serviceWorker" in navigator && "PushManager" in window && "Notification" in window
  );
}

/** A name a person recognises in the list, from the user agent. */
function guessDeviceName(): string {
  const agent = navigator.userAgent;
  const kind = /iPhone|Android.*Mobile/i.test(agent) ? "Phone" : /iPad|Android/i.test(agent) ? "Tablet" : "Computer";
  const browser = /Edg\//.test(agent)
    ? "Edge"
    : /Firefox\//.test(agent)
      ? "Firefox"
      : /Chrome\//.test(agent)
        ? "Chrome"
        : /Safari\//.test(agent)
          ? "Safari"
          : "browser";
  return `${kind} · ${browser}`;
}

function applicationServerKey(publicKey: string): Uint8Array<ArrayBuffer> {
  const base64 = publicKey.replace(/-/g, "+").replace(/_/g, "/");
  const raw = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4));
  const bytes = new Uint8Array(new ArrayBuffer(raw.length));
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

async function currentSubscription(): Promise<PushSubscription | null> {
  const registration = await navigator.serviceWorker.getRegistration("/");
  return (await registration?.pushManager.getSubscription()) ?? null;
}

/** Subscribes this browser (asking for the permission: call from a click) and stores it with the bridge. */
async function enableHere(): Promise<void> {
  if ((await Notification.requestPermission()) !== "granted")
    throw new Error("Notifications are blocked for this site; allow them in the browser's site settings.");
  const registration = await navigator.serviceWorker.register("/sw.js", { scope: "/" });
  await navigator.serviceWorker.ready;
  const { public_key } = await api("/api/v1/push/key", PushKey);
  const subscription =
    (await registration.pushManager.getSubscription()) ??
    (await registration.pushManager.subscribe({
      userVisibleOnly: true,
      applicationServerKey: applicationServerKey(public_key),
    }));
  await api("/api/v1/push/subscriptions", PushDevice, {
    method: "POST",
    body: { ...subscription.toJSON(), device: guessDeviceName() },
  });
}

/**
 * Pushes to this device and the list of the person's devices (Settings; the attention menu shows
 * only this device's switch): a request that waits or a turn that ends reaches a phone with the
 * page closed, with Allow once and Reject on the notification.
 */
export function PushDevices({ compact = false }: { compact?: boolean }) {
  const [devices, setDevices] = useState<PushDevice[] | null>(null);
  const [here, setHere] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const supported = pushSupported();

  const load = useCallback(() => {
    api("/api/v1/push/subscriptions", PushDeviceList).then(setDevices, (err: Error) => setStatus(err.message));
    if (supported)
      void currentSubscription()
        .then((subscription) => setHere(subscription?.endpoint ?? null))
        .catch(() => setHere(null));
  }, [supported]);
  useEffect(load, [load]);

  const act = async (work: () => Promise<void>) => {
    setBusy(true);
    setStatus(null);
    try {
      await work();
    } catch (err) {
      setStatus(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
      load();
    }
  };
  const remove = (endpoint: string) =>
    act(async () => {
      await api("/api/v1/push/subscriptions", z.unknown(), { method: "DELETE", body: { endpoint } });
      if (endpoint === here) await (await currentSubscription())?.unsubscribe();
    });
  const hereListed = here !== null && devices?.some((device) => device.endpoint === here);

  return (
    <div className="flex flex-col gap-2 text-xs" data-testid="push-devices">
      <p className="text-muted">
        {compact
          ? "Push to this device when nobody watches the session."
          : "Devices get a push when a request waits or a turn ends while you are not watching the session: Allow once and Reject right on the notification."}
      </p>
      {!supported ? (
        <p className="text-muted">
          This browser cannot get pushes (on iPhone: add Worldline to the home screen first).
        </p>
      ) : hereListed ? (
        <button
          type="button"
          className="self-start rounded border border-border px-2 py-1 hover:bg-raised max-md:min-h-[44px]"
          disabled={busy}
          onClick={() => void remove(here)}
          data-testid="push-disable-here"
        >
          Stop pushing to this device
        </button>
      ) : (
        <button
          type="button"
          className="self-start rounded bg-accent/20 px-2 py-1 text-accent hover:bg-accent/30 max-md:min-h-[44px]"
          disabled={busy}
          onClick={() => void act(enableHere)}
          data-testid="push-enable-here"
        >
          Push to this device
        </button>
      )}
      {!compact && devices && devices.length > 0 ? (
        <ul className="flex flex-col gap-1" aria-label="Devices that get pushes">
          {devices.map((device) => (
            <li key={device.id} className="flex items-center gap-2" data-testid="push-device">
              <span className="flex-1 truncate">
                {device.device}
                {device.endpoint === here ? <span className="text-muted"> (this device)</span> : null}
              </span>
              <button
                type="button"
                className="rounded px-2 py-0.5 text-muted hover:bg-raised hover:text-fg max-md:min-h-[44px]"
                disabled={busy}
                onClick={() => void remove(device.endpoint)}
                aria-label={`Remove ${device.device}`}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      {status ? (
        <p role="alert" className="text-danger">
          {status}
        </p>
      ) : null}
    </div>
  );
}
