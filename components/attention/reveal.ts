"use client";

/**
 * Brings an approval card into view and puts the keyboard on it, after a notification was
 * clicked. The transcript is virtualized, so the card may not be rendered yet: the view is
 * scrolled to its end (where waiting requests are) and the card looked for a few times.
 */

const TRIES = 20;
const TRY_EVERY_MS = 100;
/** The session page listens, to switch a phone's pane to the agent. */
export const REVEAL_EVENT = "worldline:attention-reveal";

export function revealApproval(approvalId: string | null): void {
  window.dispatchEvent(new CustomEvent(REVEAL_EVENT, { detail: { approvalId } }));
  let tries = 0;
  const attempt = () => {
    const transcript = document.querySelector<HTMLElement>('[data-testid="transcript"]');
    const card = approvalId
      ? document.querySelector<HTMLElement>(`[data-approval-id="${CSS.escape(approvalId)}"]`)
      : null;
    if (card) {
      card.scrollIntoView({ block: "center" });
      card.dataset.revealed = "true";
      card
        .querySelector<HTMLElement>('[data-testid="approval-allow-once"], [data-testid="approval-password"]')
        ?.focus();
      return;
    }
    if (transcript) transcript.scrollTop = transcript.scrollHeight;
    if (approvalId && ++tries < TRIES) setTimeout(attempt, TRY_EVERY_MS);
  };
  // After the pane switch has rendered.
  setTimeout(attempt, 0);
}
