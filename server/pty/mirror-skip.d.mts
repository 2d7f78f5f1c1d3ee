/** The range [start, end) of `bytes` the screen mirror may skip, or null (see mirror-skip.mjs). */
export function skippableRange(
  bytes: Uint8Array,
  keepLines: number,
): { start: number; end: number; plainFrom: number } | null;

/** Whether `bytes` is all plain text that may continue a plain run ending in the byte `before` (-1: none). */
export function continuesPlain(bytes: Uint8Array, before: number): boolean;
