"use client";

import { useCallback, useEffect, useState } from "react";
import { askPermission, notificationPermission, type Permission } from "./notify";

/** The browser's notification permission, and a request for it that only a click may make. */
export function usePermission() {
  const [permission, setPermission] = useState<Permission>("default");
  useEffect(() => {
    const sync = () => setPermission(notificationPermission());
    sync();
    // Changed in the browser's site settings while the page is open: seen when the tab comes back.
    document.addEventListener("visibilitychange", sync);
    return () => document.removeEventListener("visibilitychange", sync);
  }, []);
  const request = useCallback(async () => {
    const result = await askPermission();
    setPermission(result);
    return result;
  }, []);
  return { permission, request };
}
