"use client";

import { useEffect, useRef, useState } from "react";
import { SLASH_COMMANDS } from "@/components/session/slash-commands";
import { SHORTCUT_GROUPS, SHORTCUTS_EVENT } from "@/components/shared/shortcuts";

/**
 * The keyboard shortcuts and slash commands, in a modal dialog: `?` outside a text field,
 * `/help`, or the nav's "?" button. A native <dialog>: the page behind is inert while it is
 * open, Esc closes it, and focus returns to where it was.
 */
export function ShortcutsDialog() {
  const dialog = useRef<HTMLDialogElement>(null);
  const returnTo = useRef<HTMLElement | null>(null);
  const [open, setOpen] = useState(false);

  useEffect(() => {
    const show = () => {
      if (dialog.current?.open) return;
      returnTo.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
      dialog.current?.showModal();
      setOpen(true);
    };
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== "?" || event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
      event.preventDefault();
      show();
    };
    window.addEventListener("keydown", onKey);
    window.addEventListener(SHORTCUTS_EVENT, show);
    return () => {
      window.removeEventListener("keydown", onKey);
      window.removeEventListener(SHORTCUTS_EVENT, show);
    };
  }, []);

  const onClose = () => {
    setOpen(false);
    returnTo.current?.focus();
    returnTo.current = null;
  };

  return (
    <dialog
      ref={dialog}
      onClose={onClose}
      aria-labelledby="shortcuts-title"
      className="m-auto max-h-[85vh] w-[40rem] max-w-[95vw] overflow-y-auto rounded-md border border-border bg-panel p-0 text-fg shadow-xl backdrop:bg-black/50"
      data-testid="shortcuts-dialog"
    >
      {open ? (
        <div className="flex flex-col gap-4 p-4 text-sm">
          <header className="flex items-center">
            <h2 id="shortcuts-title" className="text-base font-semibold">
              Keyboard shortcuts
            </h2>
            <button
              type="button"
              className="ml-auto min-h-8 rounded px-2 text-muted hover:bg-raised hover:text-fg"
              onClick={() => dialog.current?.close()}
              data-testid="shortcuts-close"
            >
              Close <kbd>Esc</kbd>
            </button>
          </header>
          {SHORTCUT_GROUPS.map((group) => (
            <section key={group.title} aria-labelledby={`shortcuts-${group.title}`}>
              <h3 id={`shortcuts-${group.title}`} className="mb-1 text-xs font-semibold uppercase text-muted">
                {group.title}
              </h3>
              <dl className="grid grid-cols-[minmax(8rem,auto)_1fr] gap-x-4 gap-y-1">
                {group.shortcuts.map((shortcut) => (
                  <div key={shortcut.keys + shortcut.does} className="contents">
                    <dt>
                      <kbd>{shortcut.keys}</kbd>
                    </dt>
                    <dd>{shortcut.does}</dd>
                  </div>
                ))}
              </dl>
            </section>
          ))}
          <section aria-labelledby="shortcuts-commands">
            <h3 id="shortcuts-commands" className="mb-1 text-xs font-semibold uppercase text-muted">
              Slash commands (in the prompt)
            </h3>
            <dl className="grid grid-cols-[minmax(8rem,auto)_1fr] gap-x-4 gap-y-1">
              {SLASH_COMMANDS.map((command) => (
                <div key={command.name} className="contents">
                  <dt className="font-mono">
                    /{command.name}
                    {command.args ? ` ${command.args}` : ""}
                  </dt>
                  <dd>{command.help}</dd>
                </div>
              ))}
            </dl>
          </section>
        </div>
      ) : null}
    </dialog>
  );
}

/** Keys typed into a field, an editor or a terminal are text, not shortcuts. */
function typing(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return (
    target instanceof HTMLInputElement ||
    target instanceof HTMLTextAreaElement ||
    target instanceof HTMLSelectElement ||
    target.isContentEditable ||
    target.closest(".xterm") !== null
  );
}
