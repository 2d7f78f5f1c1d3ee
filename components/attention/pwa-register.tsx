"use client";

import { useEffect } from "react";

/** Registers the app-shell service worker (public/sw.js) in production builds; dev servers change too often. */
export function PwaRegister() {
  useEffect(() => {
    if (process.env.NODE_ENV !== "production" || !("serviceWorker" in navigator)) return;
    navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch((error: unknown) => {
      // Without it the app still works, only not installable or offline-aware.
      console.warn("[worldline] service worker registration failed", error);
    });
  }, []);
  return null;
}
