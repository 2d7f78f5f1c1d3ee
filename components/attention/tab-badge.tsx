"use client";

import { useEffect, useSyncExternalStore } from "react";
import { usePendingApprovals } from "@/components/shared/approvals-store";
import { isAway } from "./notify";

/**
 * The tab's attention count, shown as "(n) " before the title and as a badge on the
 * favicon: pending approvals (every session) plus turns that ended while this tab was
 * hidden or unfocused. Those unseen endings clear when the tab is looked at again.
 */

const TITLE_PREFIX = /^\(\d+\) /;
const ICON_PX = 64;

let unseen = 0;
const listeners = new Set<() => void>();

function setUnseen(value: number): void {
  if (value === unseen) return;
  unseen = value;
  for (const listener of listeners) listener();
}

/** A turn ended while nobody was looking. */
export function noteUnseenEnding(): void {
  setUnseen(unseen + 1);
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function TabBadge() {
  const pending = usePendingApprovals().length;
  const ended = useSyncExternalStore(
    subscribe,
    () => unseen,
    () => 0,
  );
  const count = pending + ended;

  useEffect(() => {
    const seen = () => {
      if (!isAway()) setUnseen(0);
    };
    document.addEventListener("visibilitychange", seen);
    window.addEventListener("focus", seen);
    return () => {
      document.removeEventListener("visibilitychange", seen);
      window.removeEventListener("focus", seen);
    };
  }, []);

  useEffect(() => {
    const apply = () => {
      const base = document.title.replace(TITLE_PREFIX, "");
      const next = count > 0 ? `(${count}) ${base}` : base;
      if (document.title !== next) document.title = next;
    };
    apply();
    // Pages set their own titles later; keep the count in front of whatever they set.
    const observer = new MutationObserver(apply);
    observer.observe(document.head, { subtree: true, childList: true, characterData: true });
    drawFavicon(count);
    return () => observer.disconnect();
  }, [count]);

  return null;
}

/** The app's mark with a red count badge, drawn on a canvas (no image per number to ship). */
function drawFavicon(count: number): void {
  const canvas = document.createElement("canvas");
  canvas.width = ICON_PX;
  canvas.height = ICON_PX;
  const g = canvas.getContext("2d");
  if (!g) return;
  // The mark of public/icons/icon.svg, scaled from its 512 px box.
  const k = ICON_PX / 512;
  g.fillStyle = "#12161b";
  g.beginPath();
  g.roundRect(0, 0, ICON_PX, ICON_PX, 112 * k);
  g.fill();
  g.strokeStyle = "#6ea8fe";
  g.lineWidth = 52 * k;
  g.lineCap = "round";
  g.lineJoin = "round";
  g.beginPath();
  g.moveTo(96 * k, 150 * k);
  for (const [x, y] of [
    [170, 370],
    [256, 200],
    [342, 370],
    [416, 150],
  ])
    g.lineTo(x * k, y * k);
  g.stroke();
  g.textAlign = "center";
  g.textBaseline = "middle";
  if (count > 0) {
    const r = 19;
    g.fillStyle = "#e5484d";
    g.beginPath();
    g.arc(ICON_PX - r, r, r, 0, Math.PI * 2);
    g.fill();
    g.fillStyle = "#ffffff";
    g.font = `bold ${count > 9 ? 22 : 28}px system-ui, sans-serif`;
    g.fillText(count > 99 ? "99+" : String(count), ICON_PX - r, r + 1);
  }
  let link = document.querySelector<HTMLLinkElement>('link[rel="icon"][data-attention]');
  if (!link) {
    // Added after the page's own icon link (React owns that one): the browser takes the last.
    link = document.createElement("link");
    link.rel = "icon";
    link.dataset.attention = "";
    document.head.appendChild(link);
  }
  link.type = "image/png";
  link.href = canvas.toDataURL("image/png");
  link.dataset.count = String(count);
}
