"use client";

import { useEffect, useState } from "react";

/** Below this width the IDE shows one pane at a time (reading and approving on a phone); Tailwind's `md`. */
const NARROW_PX = 768;

/** True while the window is narrower than a tablet. */
export function useNarrow(): boolean {
  const [narrow, setNarrow] = useState(false);
  useEffect(() => {
    const query = window.matchMedia(`(max-width: ${NARROW_PX - 1}px)`);
    const sync = () => setNarrow(query.matches);
    sync();
    query.addEventListener("change", sync);
    return () => query.removeEventListener("change", sync);
  }, []);
  return narrow;
}
