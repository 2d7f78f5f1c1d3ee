import type { ITheme } from "@xterm/xterm";

/** The terminal follows the app's CSS colour variables so it matches light and dark themes. */
export function xtermTheme(): ITheme {
  const style = getComputedStyle(document.documentElement);
  const read = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
  return {
    background: read("--wl-panel", "#1e1e1e"),
    foreground: read("--wl-fg", "#d4d4d4"),
    cursor: read("--wl-fg", "#d4d4d4"),
    selectionBackground: "#264f78",
  };
}
