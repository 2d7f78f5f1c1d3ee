"use client";

import { useCallback, useEffect, useRef, useState } from "react";

/** What can take the keyboard inside a popover, in order. */
const FOCUSABLE =
  '[role="menuitem"]:not([disabled]), button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), a[href], [tabindex="0"]';

/**
 * A menu or popover dialog opened from a button: the keyboard moves into it when it opens,
 * Escape or a click outside closes it, and focus goes back to the button it came from
 * (not on an outside click: the user already put it somewhere).
 */
export function usePopover<T extends HTMLElement = HTMLButtonElement>() {
  const [open, setOpen] = useState(false);
  const root = useRef<HTMLDivElement>(null);
  const panel = useRef<HTMLElement>(null);
  const trigger = useRef<T>(null);

  const close = useCallback((returnFocus = true) => {
    setOpen(false);
    if (returnFocus) trigger.current?.focus();
  }, []);

  useEffect(() => {
    if (!open) return;
    panel.current?.querySelector<HTMLElement>(FOCUSABLE)?.focus();
    const outside = (event: MouseEvent) => {
      if (!root.current?.contains(event.target as Node)) close(false);
    };
    const escape = (event: KeyboardEvent) => {
      if (event.key !== "Escape") return;
      event.preventDefault();
      close();
    };
    document.addEventListener("mousedown", outside);
    document.addEventListener("keydown", escape);
    return () => {
      document.removeEventListener("mousedown", outside);
      document.removeEventListener("keydown", escape);
    };
  }, [open, close]);

  return { open, setOpen, toggle: () => setOpen((value) => !value), close, root, panel, trigger };
}

/** Arrow keys, Home and End move between a menu's enabled items (WAI-ARIA menu pattern). */
export function onMenuKeyDown(event: React.KeyboardEvent<HTMLElement>): void {
  const items = [...event.currentTarget.querySelectorAll<HTMLElement>('[role="menuitem"]:not([disabled])')];
  if (items.length === 0) return;
  const index = items.indexOf(document.activeElement as HTMLElement);
  const to =
    event.key === "ArrowDown"
      ? (index + 1) % items.length
      : event.key === "ArrowUp"
        ? (index - 1 + items.length) % items.length
        : event.key === "Home"
          ? 0
          : event.key === "End"
            ? items.length - 1
            : null;
  if (to === null) return;
  event.preventDefault();
  items[to].focus();
}
