"use client";

import type { CSSProperties } from "react";
import { FileTree } from "./file-tree";
import type { useFileTree } from "./use-file-tree";

/** The Files pane: its header (git, "Show ignored") over the tree. */
export function TreePanel({
  tree,
  style,
  activePath,
  onOpen,
}: {
  tree: ReturnType<typeof useFileTree>;
  style: CSSProperties;
  activePath: string | null;
  onOpen: (path: string) => void;
}) {
  return (
    <aside
      className="flex min-h-0 shrink-0 flex-col bg-panel"
      style={style}
      aria-label="Files"
      data-testid="tree-panel"
    >
      <div className="flex h-7 shrink-0 items-center px-3 text-[11px] font-semibold uppercase tracking-wider text-muted max-md:h-[44px]">
        Files
        {tree.git?.repo ? <span className="ml-2 font-normal normal-case">git</span> : null}
        <button
          type="button"
          aria-pressed={tree.showIgnored}
          onClick={() => tree.setShowIgnored(!tree.showIgnored)}
          className={`ml-auto rounded px-1.5 font-normal normal-case hover:bg-raised hover:text-fg max-md:min-h-[44px] ${tree.showIgnored ? "text-fg" : ""}`}
          title="List what git ignores too (.git stays hidden)"
          data-testid="tree-show-ignored"
        >
          Show ignored
        </button>
      </div>
      <FileTree {...tree} activePath={activePath} onOpen={onOpen} />
    </aside>
  );
}
