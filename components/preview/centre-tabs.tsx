"use client";

/** The tabs over the session's centre: the editor (files, diffs, changes) or the Preview panel. */
export function CentreTabs({
  centre,
  onCentre,
}: {
  centre: "editor" | "preview";
  onCentre: (centre: "editor" | "preview") => void;
}) {
  const tab = (name: "editor" | "preview", label: string) => (
    <button
      type="button"
      role="tab"
      aria-selected={centre === name}
      className={`px-3 py-1 ${centre === name ? "border-b-2 border-accent text-fg" : "text-muted hover:text-fg"}`}
      onClick={() => onCentre(name)}
      data-testid={`centre-tab-${name}`}
    >
      {label}
    </button>
  );
  return (
    <div role="tablist" aria-label="Centre" className="flex shrink-0 border-b border-border bg-panel text-xs">
      {tab("editor", "Editor")}
      {tab("preview", "Preview")}
    </div>
  );
}
