"use client";

import { playChime } from "./chime";
import { useAttentionPrefs } from "./prefs";
import { showNotification } from "./notify";
import { usePermission } from "./use-permission";

/** The Settings page's "Attention" section: global notification and sound choices for this browser. */
export function AttentionSettings() {
  const { global, setGlobal } = useAttentionPrefs();
  const { permission, request } = usePermission();

  const setNotify = async (on: boolean) => {
    if (on && permission === "default") await request();
    setGlobal({ notify: on });
  };
  const test = async () => {
    if (global.notify && (await request()) === "granted")
      await showNotification({ title: "Worldline", body: "Notifications work.", tag: `test:${Date.now()}` });
    if (global.sound) playChime();
  };

  return (
    <section className="flex flex-col gap-2" aria-labelledby="attention" data-testid="attention-settings">
      <h2 id="attention" className="text-xs font-semibold uppercase tracking-wider text-muted">
        Attention
      </h2>
      <p className="text-xs text-muted">
        When an approval waits or a turn ends while the tab is in the background. Kept in this browser; each session can
        override it from its bell menu.
      </p>
      <label className="flex items-center gap-2">
        <input
          type="checkbox"
          checked={global.notify}
          onChange={(event) => void setNotify(event.target.checked)}
          data-testid="attention-notify"
        />
        System notifications
        <PermissionNote permission={permission} onAllow={() => void request()} />
      </label>
      <label className="flex items-center gap-2">
        <input
          type="checkbox"
          checked={global.sound}
          onChange={(event) => setGlobal({ sound: event.target.checked })}
          data-testid="attention-sound"
        />
        A short sound
      </label>
      <div>
        <button
          type="button"
          className="rounded border border-border px-2 py-0.5 text-xs hover:bg-raised"
          onClick={() => void test()}
          data-testid="attention-test"
        >
          Try it
        </button>
      </div>
    </section>
  );
}

/** Where notifications stand in this browser, with the one control that may ask for them. */
export function PermissionNote({ permission, onAllow }: { permission: string; onAllow: () => void }) {
  if (permission === "granted") return null;
  if (permission === "unsupported") return <span className="text-xs text-muted">(not supported by this browser)</span>;
  if (permission === "denied")
    return (
      <span className="text-xs text-warn" data-testid="attention-denied">
        (blocked in the browser&apos;s site settings)
      </span>
    );
  return (
    <button
      type="button"
      className="rounded bg-accent/15 px-2 py-0.5 text-xs text-accent hover:bg-accent/25"
      onClick={(event) => {
        event.preventDefault();
        onAllow();
      }}
      data-testid="attention-allow"
    >
      Allow notifications
    </button>
  );
}
