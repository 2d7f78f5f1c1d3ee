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

const PLAIN = 0;
const NOT_PLAIN = 1;
/** A UTF-8 continuation byte 0x80–0x9F: a C1 control (such as CSI) when it follows 0xC2. */
const PLAIN_UNLESS_AFTER_C2 = 2;

/** Each byte's class, looked up instead of compared: the scan runs over every byte of a flood. */
const BYTE_CLASS = new Uint8Array(256).map((_, byte) => {
  if ((byte >= 0x20 && byte <= 0x7e) || byte === LF || byte === CR || byte === 0x09) return PLAIN;
  if (byte < 0x80) return NOT_PLAIN; // Other C0 controls, ESC, DEL.
  return byte <= 0x9f ? PLAIN_UNLESS_AFTER_C2 : PLAIN;
});

/**
 * Index of the last byte before `end` that is not plain, or -1. Four bytes at a time where aligned: a word of
 * printable ASCII (most of a flood) needs no per-byte look. Every call makes the same calls, whatever the bytes: V8
 * compiles the long loop on the fly (OSR) and keeps that code, and a call it never saw run sent every later piece
 * back to the interpreter (one deoptimization and recompilation per piece).
 * @param {Uint8Array} bytes
 * @param {number} end
 */
function lastNotPlain(bytes, end) {
  const wordsFrom = (4 - (bytes.byteOffset % 4)) % 4;
  const wordCount = Math.max(0, Math.floor((end - wordsFrom) / 4));
  const wordsEnd = wordsFrom + 4 * wordCount;
  const head = lastNotPlainBytes(bytes, 0, Math.min(wordsFrom, end));
  const tail = lastNotPlainBytes(bytes, wordsEnd, end);
  if (tail >= 0) return tail;
  const inWords = wordCount > 0 ? lastNotPlainInWords(bytes, wordsFrom, wordCount) : -1;
  return inWords >= 0 ? inWords : head;
}

/**
 * The same over `count` aligned words from `from`; a suspect word's bytes are looked at inline, not by a call, for the
 * reason above (a piece of plain text never runs it).
 * @param {Uint8Array} bytes
 * @param {number} from
 * @param {number} count
 */
function lastNotPlainInWords(bytes, from, count) {
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset + from, count);
  for (let w = count - 1; w >= 0; w--) {
    const x = words[w];
    // Some byte below 0x20, or above 0x7E (the classic "hasless"/"hasmore" bit tricks), else the word is plain.
    if (!((((x - 0x20202020) & ~x) | ((x + 0x01010101) | x)) & 0x80808080)) continue;
    for (let i = from + 4 * w + 3; i >= from + 4 * w; i--) {
      const kind = BYTE_CLASS[bytes[i]];
      if (kind === NOT_PLAIN || (kind === PLAIN_UNLESS_AFTER_C2 && i > 0 && bytes[i - 1] === 0xc2)) return i;
    }
  }
  return -1;
}

/** The same, byte by byte over [from, end). @param {Uint8Array} bytes @param {number} from @param {number} end */
function lastNotPlainBytes(bytes, from, end) {
  for (let i = end - 1; i >= from; i--) {
    const kind = BYTE_CLASS[bytes[i]];
    if (kind === NOT_PLAIN || (kind === PLAIN_UNLESS_AFTER_C2 && i > 0 && bytes[i - 1] === 0xc2)) return i;
  }
  return -1;
}

/**
 * Whether `bytes` can continue a run of plain text that `before` (its last byte, or -1) ended:
 * every byte plain, and no C1 control split between the two.
 * @param {Uint8Array} bytes
 * @param {number} before
 */
export function continuesPlain(bytes, before) {
  if (bytes.length > 0 && before === 0xc2 && BYTE_CLASS[bytes[0]] === PLAIN_UNLESS_AFTER_C2) return false;
  return lastNotPlain(bytes, bytes.length) < 0;
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
  for (let i = bytes.length - 1; i > 0; i--) {
    if (bytes[i] !== LF) continue;
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
