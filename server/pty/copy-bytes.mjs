// Copying bytes to or from a terminal's output ring, a SharedArrayBuffer (see ring.ts). Plain
// JavaScript: used by the bridge and by the mirror's worker thread (see mirror-worker.mjs).

/**
 * Copies `source` into `target` at index `at`, as one native memcpy: Buffer#fill with a buffer
 * as its value. TypedArray#set copies to or from shared memory with V8's relaxed memcpy, byte by
 * byte unless both sides are equally aligned: ~0.25 ms per MB of output against ~0.02.
 * @param {Buffer} target
 * @param {Uint8Array} source
 * @param {number} at
 */
export function copyBytes(target, source, at) {
  if (source.length > 0) target.fill(source, at, at + source.length); // fill() refuses an empty value.
}
