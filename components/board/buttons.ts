/** The board's two kinds of button; big enough to tap on a phone (44 px, WCAG 2.5.5). */
export const BUTTON =
  "rounded border border-border px-2 py-0.5 text-xs hover:bg-raised disabled:opacity-40 max-md:min-h-[44px] max-md:min-w-[44px]";
export const PRIMARY =
  "rounded bg-accent px-3 py-1 text-sm font-medium text-bg disabled:opacity-40 max-md:min-h-[44px]";
