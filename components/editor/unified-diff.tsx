"use client";

/** Renders a unified diff (as tools and approvals carry it) with added/removed lines coloured. */
export function UnifiedDiff({
  diff,
  maxHeight = "24rem",
  testId = "unified-diff",
}: {
  diff: string;
  maxHeight?: string;
  testId?: string;
}) {
  const lines = diff.replace(/\n$/, "").split("\n");
  return (
    <pre
      className="overflow-auto rounded border border-border bg-bg font-mono text-xs leading-5"
      style={{ maxHeight }}
      data-testid={testId}
    >
      {lines.map((line, i) => (
        <div key={i} className={lineClass(line)}>
          {line || " "}
        </div>
      ))}
    </pre>
  );
}

function lineClass(line: string): string {
  if (line.startsWith("+++") || line.startsWith("---")) return "px-2 text-muted";
  if (line.startsWith("@@")) return "px-2 text-accent bg-accent/5";
  if (line.startsWith("+")) return "px-2 bg-ok/10 text-ok";
  if (line.startsWith("-")) return "px-2 bg-danger/10 text-danger";
  return "px-2";
}

/** The diff an edit tool reported, wherever it put it. */
export function diffOf(display: Record<string, unknown> | undefined): string | null {
  const diff = display?.diff;
  return typeof diff === "string" && diff.trim() ? diff : null;
}
