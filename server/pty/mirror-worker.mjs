// The screen mirrors' worker thread: one headless xterm (+ serialize addon) per terminal,
// fed the raw output the bridge's main thread posts, so parsing never competes with
// moving bytes to viewers. Plain JavaScript on purpose: a worker thread does not inherit
// the tsx loader the bridge runs under, and this file only needs two npm packages.
//
// Messages in (all carry `id`, the terminal):
//   open {cols, rows, scrollback, ring}   data {end}   resize {cols, rows}
//   reset {offset, epoch}                 snapshot {req}   close
// `ring` is the terminal's output ring (ring.ts), a SharedArrayBuffer the bridge writes output
// into: `data` says the output now goes up to `end`, and the bytes are read from the ring in place.
// Messages out:
//   parsed {id, offset, epoch}: nothing before `offset` in the ring is read any more
//   snapshot {id, req, data, cols, rows, offset}
// Operations of one terminal run strictly in order; `offset` counts the bytes of output
// that are on the mirror's screen, so a snapshot names the exact byte it reflects.
import { parentPort } from "node:worker_threads";
import serializePackage from "@xterm/addon-serialize";
import headlessPackage from "@xterm/headless";
import { copyBytes } from "./copy-bytes.mjs";
import { continuesPlain, skippableRange } from "./mirror-skip.mjs";

const { SerializeAddon } = serializePackage;
const { Terminal } = headlessPackage;

/**
 * Output is left queued this long before it is parsed, unless a snapshot (or other
 * operation) is waiting or much is queued: a flood then reaches the mirror in a few
 * large pieces, most of which scroll out and are skipped, instead of many small ones
 * that each have to be parsed. A snapshot never waits for it.
 */
const COALESCE_MS = 20;
/** Queued output beyond which parsing starts at once. */
const COALESCE_BYTES = 1024 * 1024;

/**
 * Per terminal. `position`: the offset of the next byte to read from `ring`. `held`: the end of the
 * last piece, not parsed yet (see `write`), copied out of the ring into `heldStore` (the ring goes on
 * over it); every op but more data parses it first, so a snapshot, resize or close never sees the
 * screen without it.
 * @typedef {{term: any, serializer: any, scrollback: number, offset: number, ops: any[], queued: number}} MirrorState
 * @typedef {{ring: Uint8Array, position: number, epoch: number, held: Uint8Array | null, heldStore: Buffer | null, lapStore: Buffer | null}} MirrorInput
 * @type {Map<string, MirrorState & MirrorInput & {busy: boolean, timer: any}>}
 */
const mirrors = new Map();

parentPort.on("message", (message) => {
  if (message.type === "open") {
    const term = new Terminal({
      cols: message.cols,
      rows: message.rows,
      scrollback: message.scrollback,
      allowProposedApi: true,
    });
    const serializer = new SerializeAddon();
    term.loadAddon(serializer);
    mirrors.set(message.id, {
      term,
      serializer,
      scrollback: message.scrollback,
      offset: 0,
      ops: [],
      queued: 0,
      busy: false,
      timer: null,
      ring: new Uint8Array(message.ring),
      position: 0,
      epoch: 0,
      held: null,
      heldStore: null,
      lapStore: null,
    });
    return;
  }
  const mirror = mirrors.get(message.id);
  if (!mirror) {
    // Closed (or never opened): a snapshot request still gets an answer, an empty screen.
    if (message.type === "snapshot")
      parentPort.postMessage({
        type: "snapshot",
        id: message.id,
        req: message.req,
        data: "",
        cols: 80,
        rows: 24,
        offset: -1,
      });
    return;
  }
  mirror.ops.push(message);
  if (message.type === "data") mirror.queued = Math.max(mirror.queued, message.end - mirror.position);
  pump(message.id, mirror);
});

function pump(id, mirror) {
  while (!mirror.busy && mirror.ops.length > 0) {
    if (mirror.ops.every((op) => op.type === "data") && mirror.queued < COALESCE_BYTES) {
      mirror.timer ??= setTimeout(() => {
        mirror.timer = null;
        mirror.queued = Infinity; // Due now, whatever is queued.
        pump(id, mirror);
      }, COALESCE_MS);
      return;
    }
    if (mirror.timer) clearTimeout(mirror.timer);
    mirror.timer = null;
    if (mirror.held && mirror.ops[0].type !== "data") {
      const held = mirror.held;
      mirror.held = null;
      if (mirror.ops[0].type === "reset" || mirror.ops[0].type === "close") continue; // Never to be shown.
      mirror.busy = true;
      mirror.term.write(held, () => {
        mirror.busy = false;
        if (mirrors.get(id) === mirror) pump(id, mirror);
      });
      return;
    }
    const op = mirror.ops.shift();
    if (op.type === "data") {
      // Everything queued behind it is written in one go: the longer the backlog, the more
      // of it scrolls out of the scrollback anyway and can be skipped (see mirror-skip.mjs).
      let end = op.end;
      while (mirror.ops[0]?.type === "data") end = mirror.ops.shift().end;
      const bytes = ringBytes(mirror, mirror.position, end);
      mirror.position = end;
      mirror.queued = 0;
      mirror.busy = true;
      write(mirror, bytes, () => {
        mirror.busy = false;
        mirror.offset = end;
        if (mirrors.get(id) !== mirror) return;
        parentPort.postMessage({ type: "parsed", id, offset: end, epoch: mirror.epoch });
        pump(id, mirror);
      });
    } else if (op.type === "resize") {
      if (op.cols !== mirror.term.cols || op.rows !== mirror.term.rows) mirror.term.resize(op.cols, op.rows);
    } else if (op.type === "reset") {
      mirror.term.reset();
      mirror.offset = op.offset;
      mirror.position = op.offset;
      mirror.epoch = op.epoch;
    } else if (op.type === "snapshot") {
      const { term, serializer } = mirror;
      parentPort.postMessage({
        type: "snapshot",
        id,
        req: op.req,
        data: serializer.serialize({ scrollback: mirror.scrollback }),
        cols: term.cols,
        rows: term.rows,
        offset: mirror.offset,
      });
    } else if (op.type === "close") {
      if (mirror.timer) clearTimeout(mirror.timer);
      mirrors.delete(id);
      mirror.term.dispose();
      return;
    }
  }
}

/**
 * Writes `bytes` to the mirror, skipping a middle part that provably cannot change what a
 * snapshot shows. What follows the skipped part (the last screens and scrollback of a flood) is
 * held rather than parsed: it is the start of the next piece, where it mostly scrolls out and is
 * skipped in turn, and it is parsed before anything looks at the screen. In a flood the
 * mirror's parsing then stays with the bytes that change state, not ~1,000 lines per piece.
 * `done()` once nothing of `bytes` is read any more.
 */
function write(mirror, bytes, done) {
  const { term } = mirror;
  const range = skippableRange(bytes, mirror.scrollback + 2 * term.rows + 2);
  const held = mirror.held;
  mirror.held = null;
  if (held && range?.plainFrom === 0 && continuesPlain(held, -1) && continuesPlain(bytes.subarray(0, 1), held.at(-1))) {
    // The held bytes start in the ground state (checked when they were held, nothing parsed
    // since) and are plain, and this piece continues them as plain text up to the range's end:
    // held, the piece's head and the range are one skippable run of plain lines.
    return hold(mirror, bytes, range.end, done);
  }
  const parseFrom = (from) => term.write(bytes.subarray(from), done);
  const piece = () => {
    if (!range) return parseFrom(0);
    term.write(bytes.subarray(0, range.start), () => {
      // Only valid from the parser's ground state (not inside an OSC/DCS string that a
      // newline does not end) and with the whole screen as the scroll region.
      if (!canSkip(term)) return parseFrom(range.start);
      hold(mirror, bytes, range.end, done);
    });
  };
  if (!held) return piece();
  term.write(held, piece);
}

/**
 * Skips `bytes` up to `from` and holds the rest. The held bytes start right after a skipped run
 * of plain lines, at a "\r\n" boundary in the ground state: prepending them to the next piece
 * keeps the skip rule's premises. Copied out of the ring (into a buffer kept for the next time):
 * the bridge writes over what the worker reported parsed.
 */
function hold(mirror, bytes, from, done) {
  const length = bytes.length - from;
  if (!mirror.heldStore || mirror.heldStore.length < length)
    mirror.heldStore = Buffer.allocUnsafeSlow(Math.max(length, 2 * (mirror.heldStore?.length ?? 64 * 1024)));
  copyBytes(mirror.heldStore, bytes.subarray(from), 0);
  mirror.held = mirror.heldStore.subarray(0, length);
  done();
}

/**
 * The output from offset `from` to `to`, read from the ring in place; only a piece that runs over
 * the ring's end (once per lap) is copied, into the mirror's `lapStore` (kept for the next lap:
 * a new buffer per lap made garbage that cost this thread more than its scan).
 */
function ringBytes(mirror, from, to) {
  const { ring } = mirror;
  const at = from % ring.length;
  const length = to - from;
  if (at + length <= ring.length) return ring.subarray(at, at + length);
  if (!mirror.lapStore || mirror.lapStore.length < length) mirror.lapStore = Buffer.allocUnsafeSlow(length);
  copyBytes(mirror.lapStore, ring.subarray(at), 0);
  copyBytes(mirror.lapStore, ring.subarray(0, length - (ring.length - at)), ring.length - at);
  return mirror.lapStore.subarray(0, length);
}

function canSkip(term) {
  const core = term._core;
  const state = core?._inputHandler?._parser?.currentState;
  const buffer = core?.buffer;
  return state === 0 && buffer?.scrollTop === 0 && buffer?.scrollBottom === term.rows - 1;
}
