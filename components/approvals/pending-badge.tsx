"use client";

import { usePendingApprovals } from "@/components/shared/approvals-store";

/** The pending count next to "Approvals" in the nav (the tab title and favicon: components/attention/tab-badge). */
export function PendingBadge() {
  const count = usePendingApprovals().length;

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
