"use client";

import type { Attachment } from "./attachments";
import type { CompletionEntry } from "./use-completion-menu";

/** Pieces of the prompt input (prompt-input.tsx) with no state of their own. */

/** A line above the input: why a send was refused, or what a slash command said. */
export function InputNotice({ text, level }: { text: string; level: "info" | "error" }) {
  return (
    <div
      className={`mb-1.5 whitespace-pre-wrap rounded px-2 py-1 text-xs ${level === "error" ? "bg-danger/10 text-danger" : "bg-raised text-muted"}`}
      data-testid="input-notice"
      role="status"
    >
      {text}
    </div>
  );
}

/**
 * The completion menu above the input. The textarea keeps the keyboard and points at the picked
 * option (aria-activedescendant), so ids are derived from `listId`.
 */
export function CompletionMenu({
  listId,
  kind,
  entries,
  picked,
}: {
  listId: string;
  kind: "files" | "commands";
  entries: CompletionEntry[];
  picked: number;
}) {
  return (
    <ul
      id={listId}
      role="listbox"
      aria-label={kind === "files" ? "Files" : "Commands"}
      className="absolute bottom-full left-2 right-2 mb-1 max-h-64 overflow-y-auto rounded-md border border-border bg-raised py-1 shadow-lg"
      data-testid={kind === "files" ? "mention-menu" : "slash-menu"}
    >
      {entries.map((entry, i) => (
        <li
          key={entry.key}
          id={`${listId}-${i}`}
          role="option"
          aria-selected={i === picked}
          className={`flex cursor-pointer gap-3 px-3 py-1 font-mono text-xs ${i === picked ? "bg-accent/20 text-fg" : "text-muted"}`}
          onMouseDown={(event) => {
            event.preventDefault();
            entry.apply();
          }}
          data-testid="menu-option"
        >
          <span className="truncate">{entry.label}</span>
          {entry.hint ? <span className="ml-auto shrink-0 font-sans">{entry.hint}</span> : null}
        </li>
      ))}
    </ul>
  );
}

/** Thumbnails of the images attached to the next prompt, each removable. */
export function AttachmentStrip({
  attachments,
  onRemove,
}: {
  attachments: Attachment[];
  onRemove: (id: string) => void;
}) {
  return (
    <ul className="mb-1.5 flex flex-wrap gap-2" aria-label="Attached images" data-testid="attachments">
      {attachments.map((image) => (
        <li
          key={image.id}
          className="group relative h-14 w-14 overflow-hidden rounded border border-border bg-bg"
          data-testid="attachment"
          title={`${image.name} · ${formatBytes(image.bytes)}`}
        >
          <img
            src={image.preview || `data:${image.mediaType};base64,${image.dataBase64}`}
            alt={image.name}
            className="h-full w-full object-cover"
          />
          <button
            type="button"
            onClick={() => onRemove(image.id)}
            className="absolute right-0.5 top-0.5 flex h-4 w-4 items-center justify-center rounded-full bg-bg/90 text-[10px] leading-none text-fg hover:bg-danger hover:text-bg"
            aria-label={`Remove image ${image.name}`}
            data-testid="attachment-remove"
          >
            ✕
          </button>
        </li>
      ))}
    </ul>
  );
}

/** Whether the next prompt asks the model to think first. */
export function ThinkingToggle({ on, onChange }: { on: boolean; onChange: (on: boolean) => void }) {
  return (
    <label
      className="flex cursor-pointer items-center gap-1"
      title="Ask the model to think before answering (where it supports it)"
    >
      <input
        type="checkbox"
        checked={on}
        onChange={(e) => onChange(e.target.checked)}
        data-testid="thinking-toggle"
        className="accent-[var(--wl-accent)]"
      />
      Thinking
    </label>
  );
}

function formatBytes(bytes: number): string {
  return bytes < 1024 * 1024 ? `${Math.max(1, Math.round(bytes / 1024))} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
