import serializePackage from "@xterm/addon-serialize";
import headlessPackage from "@xterm/headless";
import { describe, expect, it } from "vitest";
import { ScreenMirror } from "../../../server/pty/mirror";
import { waitFor } from "../../support/wait";
import { continuesPlain, skippableRange } from "../../../server/pty/mirror-skip.mjs";

const { Terminal: HeadlessTerminal } = headlessPackage;
const { SerializeAddon } = serializePackage;

/** What a snapshot of `output` must be: a plain xterm that parsed every byte. */
async function directSerialize(chunks: Buffer[], cols: number, rows: number): Promise<string> {
  const term = new HeadlessTerminal({ cols, rows, scrollback: 1000, allowProposedApi: true });
  const serializer = new SerializeAddon();
  term.loadAddon(serializer);
  for (const chunk of chunks) term.write(chunk);
  await new Promise<void>((resolve) => term.write("", resolve));
  const data = serializer.serialize({ scrollback: 1000 });
  term.dispose();
  return data;
}

async function mirrorSerialize(chunks: Buffer[], cols: number, rows: number): Promise<string> {
  const mirror = new ScreenMirror(cols, rows);
  for (const chunk of chunks) mirror.write(chunk);
  const { snapshot, offset } = await mirror.snapshot();
  expect(offset).toBe(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  mirror.dispose();
  return snapshot.data;
}

const lines = (from: number, count: number, make = (i: number) => `row ${i} lorem ipsum dolor sit amet`) =>
  Array.from({ length: count }, (_, i) => `${make(from + i)}\r\n`).join("");

describe("the screen mirror's skipping of scrolled-out plain text", () => {
  it("finds a run of whole plain lines with enough lines after it", () => {
    const bytes = Buffer.from("\x1b[31mred\x1b[0m\r\n" + lines(0, 5000));
    const range = skippableRange(bytes, 1100)!;
    expect(range).not.toBeNull();
    expect(bytes.subarray(0, range.start).toString()).toMatch(/\r\n$/);
    expect(bytes.subarray(0, range.end).toString()).toMatch(/\r\n$/);
    expect(bytes.subarray(range.end).toString().split("\n").length - 1).toBeGreaterThanOrEqual(1100);
    expect(bytes.subarray(range.start, range.end).includes(0x1b)).toBe(false);
    expect(skippableRange(Buffer.from(lines(0, 1000)), 1100)).toBeNull();
    // A C1 control (CSI as U+009B) is not plain text.
    const c1 = Buffer.concat([
      Buffer.from(lines(0, 100)),
      Buffer.from([0xc2, 0x9b]),
      Buffer.from("31m\r\n" + lines(100, 2000)),
    ]);
    const c1Range = skippableRange(c1, 1100);
    // The plain run after it may be skipped, but the skip starts after the control, never across it.
    expect(c1Range).not.toBeNull();
    expect(c1Range!.start).toBeGreaterThan(c1.indexOf(Buffer.from([0xc2, 0x9b])));
  });

  it("stops the skip at any control byte, wherever it sits in a word", () => {
    const plain = Buffer.from(lines(0, 2_000));
    const middle = plain.indexOf(0x0a, plain.length / 4) + 1;
    const controls = [...Array.from({ length: 0x20 }, (_, byte) => byte), 0x7f].filter(
      (byte) => byte !== 0x09 && byte !== 0x0a && byte !== 0x0d,
    );
    for (const shift of [0, 1, 2, 3])
      for (const control of [...controls.map((byte) => [byte]), [0xc2, 0x85]]) {
        // `shift` leading bytes move the control across the positions of a 4-byte word, and the buffer off alignment.
        const bytes = Buffer.concat([
          Buffer.alloc(shift, 0x61),
          plain.subarray(0, middle),
          Buffer.from(control),
          plain.subarray(middle),
        ]);
        const range = skippableRange(bytes.subarray(shift), 1100);
        expect(range, `byte ${control.join(",")} shifted ${shift}`).not.toBeNull();
        expect(range!.start).toBeGreaterThan(middle);
      }
  });

  const cases: Array<[string, () => Buffer[]]> = [
    [
      "a plain flood with colours before and after",
      () => [
        Buffer.from(
          "\x1b[1;32mgreen\x1b[0m start\r\n" +
            lines(0, 20_000) +
            "\x1b[44mblue bg left on\r\n" +
            lines(20_000, 3_000) +
            "prompt$ ",
        ),
      ],
    ],
    ["colours left on across the skipped part", () => [Buffer.from("\x1b[7m" + lines(0, 8_000) + "\x1b[0mend\r\n")]],
    [
      "an OSC title string that spans the lines (must not be skipped)",
      () => [Buffer.from("\x1b]0;title " + lines(0, 6_000) + "\x07after\r\n" + lines(6_000, 10))],
    ],
    [
      "a scroll region (must not be skipped)",
      () => [Buffer.from("\x1b[5;15r\x1b[10;1H" + lines(0, 6_000) + "\x1b[r" + lines(6_000, 10))],
    ],
    ["the alternate screen", () => [Buffer.from("\x1b[?1049h" + lines(0, 6_000) + "alt$ ")]],
    ["line feeds without carriage returns", () => [Buffer.from("abc\n".repeat(8_000) + lines(0, 3_000) + "x\ny\nz")]],
    [
      "many small chunks split mid-character",
      () => {
        const all = Buffer.from("€ümlaut ✓ " + lines(0, 10_000, (i) => `ünïcödé ${i} ✓✓ €`) + "end €");
        const parts: Buffer[] = [];
        for (let at = 0; at < all.length; at += 4_093) parts.push(all.subarray(at, at + 4_093));
        return parts;
      },
    ],
    ["lines longer than the screen is wide", () => [Buffer.from(lines(0, 6_000, (i) => `${i} ${"wide ".repeat(40)}`))]],
    ["yes", () => [Buffer.from("$ yes\r\n" + "y\r\n".repeat(200_000) + "^C\r\n$ ")]],
  ];

  it("sees a control byte in a tail shorter than a word, however it is aligned", () => {
    const backing = Buffer.alloc(16, 0x61);
    for (const offset of [0, 1, 2, 3])
      for (const length of [1, 2, 3, 4, 5, 6]) {
        const tail = backing.subarray(offset, offset + length);
        expect(continuesPlain(tail, -1), `plain, at ${offset}, ${length} bytes`).toBe(true);
        for (let at = 0; at < length; at++) {
          tail[at] = 0x1b;
          expect(continuesPlain(tail, -1), `ESC at ${at} of ${length} bytes from ${offset}`).toBe(false);
          tail[at] = 0x61;
        }
      }
  });

  it("leaves the same snapshot when a flood reaches the worker in several pieces, each parsed before the next", async () => {
    // Each piece is over MIRROR_LAZY_BYTES, so it is handed over and parsed alone; the end of one
    // (held, not parsed) begins the next, and state changes sit in the held parts too.
    const pieces = [
      Buffer.from("\x1b[1;32mgreen\r\n" + lines(0, 30_000)),
      Buffer.from(lines(30_000, 30_000) + "\x1b[44mblue left on\r\n" + lines(60_000, 200)),
      Buffer.from(lines(60_200, 30_000) + "\x1b[?25l" + lines(90_200, 40) + "\x1b]0;title\x07end $ "),
    ];
    expect(await piecewiseSerialize(pieces)).toBe(await directSerialize(pieces, 80, 24));
  });

  it("sees a C1 control split across two pieces", async () => {
    // The first piece ends in 0xC2 (held, unparsed); the next starts with 0x9B: together CSI, so "44m" sets a colour.
    const pieces = [
      Buffer.concat([Buffer.from(lines(0, 30_000)), Buffer.from([0xc2])]),
      Buffer.concat([Buffer.from([0x9b]), Buffer.from("44mblue\r\n" + lines(30_000, 30_000) + "end $ ")]),
    ];
    expect(await piecewiseSerialize(pieces)).toBe(await directSerialize(pieces, 80, 24));
  });

  /** The mirror's snapshot after each piece was handed over and parsed alone. */
  async function piecewiseSerialize(pieces: Buffer[]): Promise<string> {
    const mirror = new ScreenMirror(80, 24);
    for (const piece of pieces) {
      mirror.write(piece);
      await waitFor(() => mirror.lag === 0, 5_000, "the mirror to parse the piece");
    }
    const { snapshot } = await mirror.snapshot();
    mirror.dispose();
    return snapshot.data;
  }

  for (const [name, make] of cases) {
    it(`leaves the same snapshot as parsing everything: ${name}`, async () => {
      const chunks = make();
      expect(await mirrorSerialize(chunks, 80, 24)).toBe(await directSerialize(chunks, 80, 24));
    });
  }
});
