"use client";

import { useEffect } from "react";
import { usePendingApprovals } from "./approvals-store";

const TITLE_PREFIX = /^\(\d+\) /;

/** The pending count next to "Approvals" in the nav; it also prefixes the tab title, "(2) …". */
export function PendingBadge() {
  const count = usePendingApprovals().length;

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
    return () => {
      observer.disconnect();
      document.title = document.title.replace(TITLE_PREFIX, "");
    };
  }, [count]);

  if (count === 0) return null;
  return (
    <span
      className="ml-1 rounded-full bg-warn/20 px-1.5 text-[11px] font-medium text-warn"
      data-testid="approvals-badge"
      aria-label={`${count} pending`}
    >
      {count}
    </span>
  );
}
