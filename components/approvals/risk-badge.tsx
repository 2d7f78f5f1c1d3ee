const STYLES: Record<string, string> = {
  none: "bg-raised text-muted",
  low: "bg-ok/15 text-ok",
  medium: "bg-warn/15 text-warn",
  high: "bg-danger/20 text-danger",
};

export function RiskBadge({ level }: { level: string }) {
  return (
    <span
      className={`rounded px-1.5 py-0.5 text-[11px] font-medium uppercase ${STYLES[level] ?? STYLES.medium}`}
      data-testid="risk-badge"
      data-risk={level}
    >
      {level} risk
    </span>
  );
}
