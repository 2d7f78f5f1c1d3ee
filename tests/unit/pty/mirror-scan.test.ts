import fs from "node:fs";
import wabtInit from "wabt";
import { describe, expect, it } from "vitest";
import { lastNotPlain } from "../../../server/pty/mirror-scan.mjs";

const WAT_FILE = new URL("../../../server/pty/mirror-scan.wat", import.meta.url);
const SCAN_FILE = new URL("../../../server/pty/mirror-scan.mjs", import.meta.url);

/** The rule of mirror-scan.wat, a byte at a time: what the vector scan must agree with. */
function lastNotPlainByBytes(bytes: Uint8Array, end: number, before: number): number {
  for (let i = end - 1; i >= 0; i--) {
    const byte = bytes[i];
    const previous = i > 0 ? bytes[i - 1] : before;
    if ((byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d) || byte === 0x7f) return i;
    if (byte >= 0x80 && byte <= 0x9f && previous === 0xc2) return i;
  }
  return -1;
}

/** A deterministic generator, so a failure names a case that can be run again. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe("the mirror's SIMD scan", () => {
  it("is mirror-scan.wat compiled", async () => {
    const wabt = await wabtInit();
    const module = wabt.parseWat("mirror-scan.wat", fs.readFileSync(WAT_FILE, "utf8"), { simd: true });
    const compiled = Buffer.from(module.toBinary({}).buffer).toString("base64");
    module.destroy();
    expect(fs.readFileSync(SCAN_FILE, "utf8")).toContain(`"${compiled}"`);
  });

  it("finds the same byte as a byte-by-byte scan, at any length, alignment and end", () => {
    const next = random(20);
    // Mostly plain text with the bytes that matter: controls, DEL, C1 controls and their 0xC2 lead.
    const alphabet = [0x61, 0x20, 0x0d, 0x0a, 0x09, 0xc2, 0x85, 0x9b, 0xe2, 0x94, 0x1b, 0x07, 0x7f, 0x00];
    for (let round = 0; round < 3_000; round++) {
      const length = Math.floor(next() * (round % 50 === 0 ? 700_000 : 200)); // Some over the 256 KB window.
      const rare = next() < 0.5 ? 0.999 : 0.9;
      const backing = new Uint8Array(length + 3);
      const bytes = backing.subarray(round % 4, (round % 4) + length);
      for (let i = 0; i < length; i++)
        bytes[i] = alphabet[Math.floor(next() < rare ? next() * 4 : next() * alphabet.length)];
      const end = Math.floor(next() * (length + 1));
      const before = [-1, 0x61, 0xc2][round % 3];
      expect(lastNotPlain(bytes, end, before), `round ${round}: ${length} bytes, end ${end}`).toBe(
        lastNotPlainByBytes(bytes, end, before),
      );
    }
  });

  it("sees a C1 control split from its 0xC2 at a window's edge and at the start", () => {
    const bytes = Buffer.alloc(600_000, 0x61);
    const edge = bytes.length - 256 * 1024; // Windows are counted from the end: the last one starts here.
    bytes[edge - 1] = 0xc2;
    bytes[edge] = 0x9b;
    expect(lastNotPlain(bytes, bytes.length)).toBe(edge);
    expect(lastNotPlain(Buffer.from([0x9b, 0x61]), 2, 0xc2)).toBe(0);
    expect(lastNotPlain(Buffer.from([0x9b, 0x61]), 2, -1)).toBe(-1);
  });
});
