import type { ReactNode } from "react";

/** Icons drawn as SVG, not characters: a font without the glyph (an emoji on a bare Linux) draws a box. */

/** What every icon's lines share: drawn in the text's colour, 1.3 px wide, unfilled. */
const LINE = { fill: "none", stroke: "currentColor", strokeWidth: "1.3" } as const;

function Icon({ children, size = 14 }: { children: ReactNode; size?: number }) {
  return (
    <svg viewBox="0 0 16 16" width={size} height={size} aria-hidden className="inline-block align-[-2px]">
      {children}
    </svg>
  );
}

export function EyeIcon() {
  return (
    <Icon>
      <path d="M1.5 8S4 3.5 8 3.5 14.5 8 14.5 8 12 12.5 8 12.5 1.5 8 1.5 8Z" {...LINE} strokeLinejoin="round" />
      <circle cx="8" cy="8" r="2" fill="currentColor" />
    </Icon>
  );
}

export function SunIcon() {
  return (
    <Icon>
      <circle cx="8" cy="8" r="3" {...LINE} />
      <path
        d="M8 1v2M8 13v2M1 8h2M13 8h2M3 3l1.4 1.4M11.6 11.6 13 13M3 13l1.4-1.4M11.6 4.4 13 3"
        {...LINE}
        strokeLinecap="round"
      />
    </Icon>
  );
}

export function MoonIcon() {
  return (
    <Icon>
      <path d="M13.5 10.2A5.8 5.8 0 0 1 5.8 2.5a5.8 5.8 0 1 0 7.7 7.7Z" {...LINE} strokeLinejoin="round" />
    </Icon>
  );
}

/** The attention bell, struck through when muted. */
export function BellIcon({ muted }: { muted: boolean }) {
  const line = { ...LINE, strokeWidth: "1.4", strokeLinecap: "round" } as const;
  return (
    <Icon size={13}>
      <path
        d="M8 1.5a4.5 4.5 0 0 0-4.5 4.5v2.6L2.2 11h11.6l-1.3-2.4V6A4.5 4.5 0 0 0 8 1.5ZM6.3 12.5a1.8 1.8 0 0 0 3.4 0"
        {...line}
        strokeLinejoin="round"
      />
      {muted ? <path d="M2 2l12 12" {...line} /> : null}
    </Icon>
  );
}

/** A picture: a frame with a sun and a hill (an attached image whose preview was not kept). */
export function ImageIcon() {
  return (
    <Icon size={13}>
      <rect x="1.5" y="2.5" width="13" height="11" rx="1.5" {...LINE} />
      <circle cx="5.5" cy="6" r="1.3" fill="currentColor" />
      <path d="M2 12.5 6.5 8.5l3 2.5 2-1.8 3 2.8" {...LINE} strokeLinejoin="round" />
    </Icon>
  );
}

/** Opens elsewhere (another pane or tab): an arrow out of the corner. */
export function OpenOutIcon() {
  return (
    <Icon size={12}>
      <path d="M6 3H3v10h10v-3M9 2.5h4.5V7M13.5 2.5 7.5 8.5" {...LINE} strokeLinecap="round" strokeLinejoin="round" />
    </Icon>
  );
}
