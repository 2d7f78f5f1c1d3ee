import type { BrowserContext, Page } from "@playwright/test";

/** A notification the page created, as the stub recorded it. */
export interface RecordedNotification {
  title: string;
  body: string;
  tag: string;
}

/**
 * Installs, before any page script: a `window.Notification` stub that records what is shown
 * (its permission kept in localStorage, like a browser's per-site setting), a switch that makes
 * the page hidden and unfocused, and a WebAudio stub that counts the tones played.
 */
export async function installAttentionStubs(context: BrowserContext, permission = "default"): Promise<void> {
  await context.addInitScript((initial) => {
    const w = window as unknown as Record<string, unknown>;
    w.__notes = [] as unknown[];
    w.__permissionAsks = 0;
    w.__tones = 0;
    w.__away = false;
    if (!localStorage.getItem("__perm")) localStorage.setItem("__perm", initial);
    class FakeNotification {
      static get permission() {
        return localStorage.getItem("__perm") ?? "default";
      }
      static async requestPermission() {
        w.__permissionAsks = (w.__permissionAsks as number) + 1;
        localStorage.setItem("__perm", "granted");
        return "granted";
      }
      onclick: (() => void) | null = null;
      closed = false;
      constructor(
        readonly title: string,
        options: { body?: string; tag?: string } = {},
      ) {
        Object.assign(this, { body: options.body ?? "", tag: options.tag ?? "" });
        (w.__notes as unknown[]).push(this);
      }
      close() {
        this.closed = true;
      }
    }
    w.Notification = FakeNotification;
    Object.defineProperty(document, "visibilityState", { get: () => (w.__away ? "hidden" : "visible") });
    Object.defineProperty(document, "hidden", { get: () => w.__away });
    document.hasFocus = () => !w.__away;
    class FakeAudioContext {
      state = "running";
      currentTime = 0;
      destination = {};
      createOscillator() {
        return {
          type: "sine",
          frequency: { value: 0 },
          connect: (node: unknown) => node,
          start: () => void (w.__tones = (w.__tones as number) + 1),
          stop: () => undefined,
        };
      }
      createGain() {
        const ramp = () => undefined;
        return {
          gain: { setValueAtTime: ramp, linearRampToValueAtTime: ramp, exponentialRampToValueAtTime: ramp },
          connect: (node: unknown) => node,
        };
      }
      resume() {
        return Promise.resolve();
      }
    }
    w.AudioContext = FakeAudioContext;
  }, permission);
}

/** Hides the page (or shows it again), as switching tabs does. */
export async function setAway(page: Page, away: boolean): Promise<void> {
  await page.evaluate((value) => {
    (window as unknown as { __away: boolean }).__away = value;
    document.dispatchEvent(new Event("visibilitychange"));
    window.dispatchEvent(new Event(value ? "blur" : "focus"));
  }, away);
}

export function notifications(page: Page): Promise<RecordedNotification[]> {
  return page.evaluate(() =>
    ((window as unknown as { __notes: RecordedNotification[] }).__notes ?? []).map((n) => ({
      title: n.title,
      body: n.body,
      tag: n.tag,
    })),
  );
}

/** Clicks the index-th notification the page showed. */
export async function clickNotification(page: Page, index: number): Promise<void> {
  await page.evaluate((i) => {
    const notes = (window as unknown as { __notes: { onclick: (() => void) | null }[] }).__notes;
    notes[i].onclick?.();
  }, index);
}

export function counters(page: Page): Promise<{ asks: number; tones: number }> {
  return page.evaluate(() => {
    const w = window as unknown as { __permissionAsks: number; __tones: number };
    return { asks: w.__permissionAsks, tones: w.__tones };
  });
}
