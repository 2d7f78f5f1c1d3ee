import groups from "./shortcuts.json";

/** Every keyboard shortcut of the app, in one place: the `?` dialog lists these. */
export interface Shortcut {
  keys: string;
  does: string;
}

export interface ShortcutGroup {
  /** Set on a group that a page also shows on its own (the /approvals queue's key hint). */
  id?: string;
  title: string;
  shortcuts: Shortcut[];
}

/** The groups, in the order the dialog shows them (the table is data: shortcuts.json). */
export const SHORTCUT_GROUPS: ShortcutGroup[] = groups;

/** One group's shortcuts, for a page that lists them where they apply. */
export function shortcutsOf(id: string): Shortcut[] {
  return SHORTCUT_GROUPS.find((group) => group.id === id)?.shortcuts ?? [];
}

/** `/help` and the nav's "?" open the shortcuts dialog by dispatching this on window. */
export const SHORTCUTS_EVENT = "worldline:shortcuts";

export function showShortcuts(): void {
  window.dispatchEvent(new Event(SHORTCUTS_EVENT));
}
