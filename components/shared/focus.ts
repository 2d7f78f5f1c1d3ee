/** How long a keyboard shortcut waits for the element it moves focus to (a panel that is opening). */
const FOCUS_WAIT_MS = 3_000;

/**
 * Focuses the first element matching `selector` now, or as soon as it appears (a panel a shortcut
 * just opened renders on the next frames). Gives up quietly after a few seconds.
 */
export function focusWhenReady(selector: string): void {
  const find = () => document.querySelector<HTMLElement>(selector);
  const now = find();
  if (now) return now.focus();
  const observer = new MutationObserver(() => {
    const element = find();
    if (!element) return;
    stop();
    element.focus();
  });
  const timer = setTimeout(() => stop(), FOCUS_WAIT_MS);
  const stop = () => {
    observer.disconnect();
    clearTimeout(timer);
  };
  observer.observe(document.body, { subtree: true, childList: true, attributes: true });
}
