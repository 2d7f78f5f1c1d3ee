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

/** Below this many bytes a skip saves less than the extra write costs. */
const MIN_SKIP_BYTES = 4096;

const LF = 0x0a;
const CR = 0x0d;

/** @param {Uint8Array} bytes @param {number} index */
function plain(bytes, index) {
  const byte = bytes[index];
  if (byte >= 0x20 && byte <= 0x7e) return true;
  if (byte === LF || byte === CR || byte === 0x09) return true;
  if (byte < 0x80) return false; // Other C0 controls, ESC, DEL.
  // U+0080–U+009F (C1 controls such as CSI) are 0xC2 0x80–0x9F in UTF-8.
  if (byte <= 0x9f && index > 0 && bytes[index - 1] === 0xc2) return false;
  return true;
}

/**
 * The range [start, end) of `bytes` that may be skipped, or null. `start` and `end` are
 * both just after a "\r\n", and at least `keepLines` line feeds follow `end`.
 * @param {Uint8Array} bytes
 * @param {number} keepLines
 * @returns {{start: number, end: number} | null}
 */
export function skippableRange(bytes, keepLines) {
  if (bytes.length < MIN_SKIP_BYTES) return null;
  let end = -1;
  let lineFeeds = 0;
  for (let i = bytes.length - 1; i > 0; i--) {
    if (bytes[i] !== LF) continue;
    if (lineFeeds >= keepLines && bytes[i - 1] === CR) {
      end = i + 1;
      break;
    }
    lineFeeds++;
  }
  if (end < 0) return null;
  let first = end - 1;
  while (first >= 0 && plain(bytes, first)) first--;
  first++; // The run of plain bytes is [first, end).
  let start = -1;
  for (let i = first + 1; i < end; i++) {
    if (bytes[i] === LF && bytes[i - 1] === CR) {
      start = i + 1;
      break;
    }
  }
  if (start < 0 || end - start < MIN_SKIP_BYTES) return null;
  return { start, end };
}
