/** The range [start, end) of `bytes` the screen mirror may skip, or null (see mirror-skip.mjs). */
export function skippableRange(bytes: Uint8Array, keepLines: number): { start: number; end: number } | null;
