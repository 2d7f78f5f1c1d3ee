"use client";

import { useAttentionPrefs, type AttentionPrefs } from "./prefs";
import { PermissionNote } from "./attention-settings";
import { usePermission } from "./use-permission";
import { PushDevices } from "./push-devices";
import { usePopover } from "@/components/shared/use-popover";
import { BellIcon } from "@/components/shared/icons";

type Choice = "default" | "on" | "off";

/**
 * The bell in a session's header (or on /approvals, without a session): notification and
 * sound for this session, each "as in Settings" or forced on or off. Opening it is also where
 * the browser's permission is asked for, from a click.
 */
export function AttentionMenu({ sessionId }: { sessionId?: string }) {
  const { open, toggle, root, panel, trigger } = usePopover();
  const { global, override, effective, setGlobal, setOverride } = useAttentionPrefs(sessionId);
  const { permission, request } = usePermission();

  const choose = async (key: keyof AttentionPrefs, choice: Choice) => {
    if (key === "notify" && choice !== "off" && permission === "default") await request();
    if (!sessionId) setGlobal({ [key]: choice !== "off" });
    else setOverride({ [key]: choice === "default" ? undefined : choice === "on" });
  };
  const muted = !effective.notify && !effective.sound;

  return (
    <div className="relative" ref={root}>
      <button
        ref={trigger}
        type="button"
        className={`rounded px-2 py-0.5 hover:bg-raised max-md:min-h-[44px] max-md:min-w-[44px] ${muted ? "text-muted" : "text-fg"}`}
        aria-expanded={open}
        aria-haspopup="dialog"
        aria-label="Notifications and sound"
        title="Notifications and sound"
        onClick={toggle}
        data-testid="attention-menu"
      >
        <BellIcon muted={muted} />
        {permission === "default" && effective.notify ? <span className="ml-0.5 text-accent">•</span> : null}
      </button>
      {open ? (
        <div
          ref={panel as React.RefObject<HTMLDivElement>}
          className="absolute right-0 top-full z-30 mt-1 flex w-64 flex-col gap-2 rounded-md border border-border bg-panel p-3 text-xs text-fg shadow-lg"
          role="dialog"
          aria-label="Notifications and sound"
          data-testid="attention-popover"
        >
          <p className="text-muted">
            {sessionId ? "For this session" : "For every session"}, when the tab is in the background.
          </p>
          {(["notify", "sound"] as const).map((key) => (
            <fieldset key={key} className="flex items-center gap-1">
              <legend className="sr-only">{key === "notify" ? "Notifications" : "Sound"}</legend>
              <span className="w-20">{key === "notify" ? "Notifications" : "Sound"}</span>
              {(sessionId ? (["default", "on", "off"] as Choice[]) : (["on", "off"] as Choice[])).map((choice) => {
                const current: Choice = sessionId
                  ? override[key] === undefined
                    ? "default"
                    : override[key]
                      ? "on"
                      : "off"
                  : global[key]
                    ? "on"
                    : "off";
                return (
                  <button
                    key={choice}
                    type="button"
                    aria-pressed={current === choice}
                    className={`rounded px-2 py-0.5 ${current === choice ? "bg-accent/20 text-accent" : "text-muted hover:bg-raised"}`}
                    onClick={() => void choose(key, choice)}
                    data-testid={`attention-${key}-${choice}`}
                  >
                    {choice === "default" ? `Default (${global[key] ? "on" : "off"})` : choice}
                  </button>
                );
              })}
            </fieldset>
          ))}
          {effective.notify ? <PermissionNote permission={permission} onAllow={() => void request()} /> : null}
          <PushDevices compact />
        </div>
      ) : null}
    </div>
  );
}
