/** Index of the last byte before `end` that is not plain text (see mirror-scan.wat), or -1; `before`: the byte before `bytes` (-1: none). */
export function lastNotPlain(bytes: Uint8Array, end: number, before?: number): number;
