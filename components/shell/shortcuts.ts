import groups from "./shortcuts.json";

/** Every keyboard shortcut of the app, in one place: the `?` dialog lists these. */
export interface Shortcut {
  keys: string;
  does: string;
}

/** The groups, in the order the dialog shows them (the table is data: shortcuts.json). */
export const SHORTCUT_GROUPS: { title: string; shortcuts: Shortcut[] }[] = groups;

/** `/help` and the nav's "?" open the shortcuts dialog by dispatching this on window. */
export const SHORTCUTS_EVENT = "worldline:shortcuts";

export function showShortcuts(): void {
  window.dispatchEvent(new Event(SHORTCUTS_EVENT));
}
