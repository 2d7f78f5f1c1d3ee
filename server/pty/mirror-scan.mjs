// The screen mirror's plain-text scan, in WebAssembly SIMD: mirror-scan.wat compiled (by wabt;
// tests/unit/pty/mirror-scan.test.ts checks that these bytes are that file). Plain JavaScript,
// like the mirror's worker that uses it (see mirror-worker.mjs).

import { copyBytes } from "./copy-bytes.mjs";

const WASM = Buffer.from(
  "AGFzbQEAAAABBgFgAX8BfwMCAQAFAwEAAQcZAgZtZW1vcnkCAAxsYXN0Tm90UGxhaW4AAArCAQG/AQQBfwF7AX8Ie0Eg/Q8hBEEJ/Q8hBUEK/Q8hBkEN/Q8hB0H/AP0PIQhBgAH9DyEJQSD9DyEKQcIB/Q8hC0EgIABBD2pBcHFqIQECQANAIAFBIE0NASABQRBrIQEgAf0ABAAhAiACIAT9JiACIAX9IyACIAb9I/1QIAIgB/0j/VD9TyACIAj9I/1QIAIgCf1xIAr9JiABQQFr/QAEACAL/SP9Tv1Q/WQhAyADRQ0AIAFBHyADZ2tqQSBrDwsLQX8L",
  "base64",
);

/** Where the text goes in the module's memory; the byte before it is the text's previous byte. */
const TEXT = 32;
/** Bytes copied into the module's memory per call: the scan stops at the first hit from the end, so most of a piece with a hit near its end is never copied. */
const WINDOW = 256 * 1024;
const WASM_PAGE = 64 * 1024;

const scanner = new WebAssembly.Instance(new WebAssembly.Module(WASM)).exports;
scanner.memory.grow(Math.ceil((TEXT + WINDOW + 16) / WASM_PAGE) - scanner.memory.buffer.byteLength / WASM_PAGE);

/**
 * Index of the last byte before `end` that is not plain (see mirror-scan.wat), or -1; `before` is the byte before
 * `bytes` (-1: none), for a C1 control split between the two.
 * @param {Uint8Array} bytes
 * @param {number} end
 * @param {number} before
 */
export function lastNotPlain(bytes, end, before = -1) {
  const memory = Buffer.from(scanner.memory.buffer);
  for (let stop = end; stop > 0;) {
    const from = Math.max(0, stop - WINDOW);
    const previous = from > 0 ? bytes[from - 1] : before;
    memory[TEXT - 1] = previous < 0 ? 0x20 : previous;
    copyBytes(memory, bytes.subarray(from, stop), TEXT); // The mirror's pieces are in shared memory.
    memory.fill(0x20, TEXT + stop - from, TEXT + stop - from + 16);
    const hit = scanner.lastNotPlain(stop - from);
    if (hit >= 0) return from + hit;
    stop = from;
  }
  return -1;
}
