/** Copies `source` into `target` at `at` with one native memcpy (see copy-bytes.mjs). */
export function copyBytes(target: Buffer, source: Uint8Array, at: number): void;
