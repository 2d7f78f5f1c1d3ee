// Which part of a burst of output the screen mirror may skip without changing any later
// snapshot. Plain JavaScript: used by the mirror's worker thread (see mirror-worker.mjs).
//
// A run of whole lines "…\r\n" made only of printable characters, CR, LF and TAB changes
// no terminal state but the cursor and the cells it writes: no mode, colour, charset, tab
// stop or title. If at least `keepLines` line feeds follow the run, and `keepLines` is at
// least scrollback + 2 × rows + 2, then every row the run wrote (and every row the cursor
// could have reached differently, since the run moves it down by up to a screen) has
// scrolled out of the scrollback by the end, and the cursor starts column 0 on both
// paths. So parsing the bytes before the run and then the bytes after it leaves the same
// buffer as parsing everything — provided the parser is in its ground state where the run
// starts and the scroll region is the whole screen, which the worker checks before
// skipping.

import { lastNotPlain } from "./mirror-scan.mjs";

/** Below this many bytes a skip saves less than the extra write costs. */
const MIN_SKIP_BYTES = 4096;

const LF = 0x0a;
const CR = 0x0d;

/**
 * Whether `bytes` can continue a run of plain text that `before` (its last byte, or -1) ended:
 * every byte plain (mirror-scan.wat says which are), and no C1 control split between the two.
 * @param {Uint8Array} bytes
 * @param {number} before
 */
export function continuesPlain(bytes, before) {
  return lastNotPlain(bytes, bytes.length, before) < 0;
}

/**
 * The range [start, end) of `bytes` that may be skipped, or null. `start` and `end` are
 * both just after a "\r\n", and at least `keepLines` line feeds follow `end`. `plainFrom`
 * is where the run of plain bytes that ends at `end` begins (0: all of `bytes` before `end`).
 * @param {Uint8Array} bytes
 * @param {number} keepLines
 * @returns {{start: number, end: number, plainFrom: number} | null}
 */
export function skippableRange(bytes, keepLines) {
  if (bytes.length < MIN_SKIP_BYTES) return null;
  let end = -1;
  let lineFeeds = 0;
  for (let i = bytes.lastIndexOf(LF, bytes.length - 1); i > 0; i = bytes.lastIndexOf(LF, i - 1)) {
    if (lineFeeds >= keepLines && bytes[i - 1] === CR) {
      end = i + 1;
      break;
    }
    lineFeeds++;
  }
  if (end < 0) return null;
  const first = lastNotPlain(bytes, end) + 1; // The run of plain bytes is [first, end).
  let start = -1;
  for (let i = first + 1; i < end; i++) {
    if (bytes[i] === LF && bytes[i - 1] === CR) {
      start = i + 1;
      break;
    }
  }
  if (start < 0 || end - start < MIN_SKIP_BYTES) return null;
  return { start, end, plainFrom: first };
}
