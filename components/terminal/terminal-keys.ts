/**
 * Ctrl+` moves the keyboard into the terminal and back out to the prompt: a terminal keeps Tab
 * and Shift+Tab for the shell, so this is its way out. Matched by the key's place as well as its
 * character: on a German or French layout the key left of 1 types "^" (a dead key) or "²", never "`".
 */
export function isTerminalToggle(event: KeyboardEvent): boolean {
  return event.ctrlKey && (event.key === "`" || event.code === "Backquote");
}

/** Read with the terminal's input, so a screen-reader user learns the way out on entering. */
export const LEAVE_TERMINAL_HINT =
  "Tab goes to the shell here. To leave the terminal for the prompt, press Control+Backquote (the key left of 1).";
