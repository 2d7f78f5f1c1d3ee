/** Every keyboard shortcut of the app, in one place: the `?` dialog lists these. */
export interface Shortcut {
  keys: string;
  does: string;
}

export const SHORTCUT_GROUPS: { title: string; shortcuts: Shortcut[] }[] = [
  {
    title: "Anywhere",
    shortcuts: [
      { keys: "?", does: "Show these shortcuts (outside a text field); /help in the prompt does too" },
      { keys: "Tab / Shift+Tab", does: "Move between controls; the first Tab offers “Skip to content”" },
      { keys: "Esc", does: "Close a menu or dialog; focus goes back to what opened it" },
    ],
  },
  {
    title: "Session",
    shortcuts: [
      { keys: "Ctrl+L", does: "Focus the prompt" },
      { keys: "Ctrl+B", does: "Show or hide the file tree" },
      { keys: "Ctrl+J", does: "Show or hide the terminal panel" },
      { keys: "Ctrl+`", does: "Into the terminal, and back out to the prompt" },
      { keys: "Ctrl+Shift+E", does: "Focus the file tree" },
      { keys: "Ctrl+Shift+G", does: "Open or close the Changes view" },
      { keys: "Ctrl+Shift+H", does: "Open or close the timeline" },
    ],
  },
  {
    title: "Prompt",
    shortcuts: [
      { keys: "Enter", does: "Send (steers a running turn)" },
      { keys: "Shift+Enter", does: "New line" },
      { keys: "↑ / ↓", does: "Earlier and later prompts of this folder" },
      { keys: "@ / /", does: "Mention a file / a command; ↑ ↓ pick, Tab or Enter take" },
      { keys: "Shift+Tab", does: "Plan mode on or off" },
      { keys: "Ctrl+X", does: "Shell mode: the line runs in the session terminal" },
      { keys: "Esc", does: "Stop the running turn" },
    ],
  },
  {
    title: "Approvals",
    shortcuts: [
      { keys: "a / s / r", does: "Allow once / allow for the session / reject (on /approvals)" },
      { keys: "f", does: "Write feedback, then Reject sends it" },
      { keys: "j / k", does: "Next / previous request" },
    ],
  },
  {
    title: "Files, editor and terminal",
    shortcuts: [
      { keys: "↑ ↓ ← → Home End", does: "Move in the file tree, open and close folders" },
      { keys: "Enter", does: "Open the file" },
      { keys: "Ctrl+S", does: "Save the file" },
      { keys: "Delete", does: "Close the focused editor or terminal tab" },
      { keys: "F2", does: "Rename the focused terminal tab" },
      { keys: "Ctrl+Shift+F", does: "Search the terminal" },
    ],
  },
];

/** `/help` and the nav's "?" open the shortcuts dialog by dispatching this on window. */
export const SHORTCUTS_EVENT = "worldline:shortcuts";

export function showShortcuts(): void {
  window.dispatchEvent(new Event(SHORTCUTS_EVENT));
}
