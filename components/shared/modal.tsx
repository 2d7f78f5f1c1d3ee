"use client";

import { useEffect, useRef, type KeyboardEvent, type ReactNode } from "react";

/** What can take the keyboard inside the dialog. */
const FOCUSABLE =
  'button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), a[href], [tabindex="0"]';

/**
 * A modal dialog on the native <dialog>: while it is open the page behind is inert (Tab stays
 * inside), Esc closes it, and focus goes back to the element that had it before. The control marked
 * `data-autofocus` gets the keyboard when it opens. Rendered only
 * while `open`, so each opening starts from a fresh state.
 */
export function Modal({
  open,
  onClose,
  title,
  testId,
  returnFocusTo,
  children,
}: {
  open: boolean;
  onClose: () => void;
  title: string;
  testId: string;
  /** Where focus goes on closing when the element that opened the dialog is gone (a selector). */
  returnFocusTo?: string;
  children: ReactNode;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const returnTo = useRef<HTMLElement | null>(null);
  const titleId = `${testId}-title`;

  useEffect(() => {
    const element = dialog.current;
    if (!open || !element || element.open) return;
    returnTo.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    element.showModal();
    // showModal focuses the first control (Close); the dialog's own field says it wants the keyboard.
    element.querySelector<HTMLElement>("[data-autofocus]")?.focus();
    return () => {
      if (element.open) element.close();
      // The element that opened it may be gone by now (a card that changed column): then its stand-in.
      const back = returnTo.current?.isConnected
        ? returnTo.current
        : returnFocusTo
          ? document.querySelector<HTMLElement>(returnFocusTo)
          : null;
      returnTo.current = null;
      back?.focus();
    };
  }, [open, returnFocusTo]);

  if (!open) return null;
  return (
    <dialog
      ref={dialog}
      onClose={onClose}
      onKeyDown={keepTabInside}
      aria-labelledby={titleId}
      className="m-auto max-h-[85vh] w-[32rem] max-w-[95vw] overflow-y-auto rounded-md border border-border bg-panel p-0 text-fg shadow-xl backdrop:bg-black/50"
      data-testid={testId}
    >
      <div className="flex flex-col gap-3 p-4 text-sm">
        <header className="flex items-center gap-2">
          <h2 id={titleId} className="min-w-0 truncate text-base font-semibold">
            {title}
          </h2>
          <button
            type="button"
            className="ml-auto min-h-8 shrink-0 rounded px-2 text-muted hover:bg-raised hover:text-fg"
            onClick={() => dialog.current?.close()}
            data-testid={`${testId}-close`}
          >
            Close <kbd>Esc</kbd>
          </button>
        </header>
        {children}
      </div>
    </dialog>
  );
}

/**
 * Tab past the last control comes back to the first, and Shift+Tab before the first goes to the
 * last: the page behind is inert, but Chromium would otherwise hand the keyboard to its own toolbar.
 */
function keepTabInside(event: KeyboardEvent<HTMLDialogElement>): void {
  if (event.key !== "Tab") return;
  const controls = [...event.currentTarget.querySelectorAll<HTMLElement>(FOCUSABLE)];
  if (controls.length === 0) return;
  const [first, last] = [controls[0], controls[controls.length - 1]];
  const at = document.activeElement;
  if (event.shiftKey && (at === first || at === event.currentTarget)) {
    event.preventDefault();
    last.focus();
  } else if (!event.shiftKey && at === last) {
    event.preventDefault();
    first.focus();
  }
}
