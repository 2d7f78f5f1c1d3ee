/** Copies `source` into `target` at `at` with one native memcpy (see copy-bytes.mjs). */
export function copyBytes(target: Uint8Array, source: Uint8Array, at: number): void;
