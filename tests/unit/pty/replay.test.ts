import headlessPackage from "@xterm/headless";
import { afterEach, describe, expect, it } from "vitest";
import { localPtyOpener, PtyManager, type ScreenSnapshot, type ViewerSink } from "../../../server/pty";
import { HIGH_WATERMARK_BYTES, MAX_BATCH_BYTES, MIRROR_RING_BYTES } from "../../../server/pty/limits";
import { ScreenMirror } from "../../../server/pty/mirror";
import { waitFor } from "../../support/wait";

const { Terminal: HeadlessTerminal } = headlessPackage;

function screenOf(term: InstanceType<typeof HeadlessTerminal>): Promise<string[]> {
  return new Promise((resolve) =>
    term.write("", () => {
      const buffer = term.buffer.active;
      resolve(Array.from({ length: buffer.length }, (_, y) => buffer.getLine(y)?.translateToString(true) ?? ""));
    }),
  );
}

describe("ScreenMirror snapshots", () => {
  it("rebuild the screen, scrollback, colours and cursor in a fresh xterm", async () => {
    const mirror = new ScreenMirror(40, 10);
    const direct = new HeadlessTerminal({ cols: 40, rows: 10, scrollback: 1000, allowProposedApi: true });
    const output = Buffer.from(
      Array.from({ length: 30 }, (_, i) => `line ${i} \x1b[1;3${i % 8}mcolour\x1b[0m\r\n`).join("") +
        "prompt$ ab\x1b[2D",
    );
    // Split inside a multi-byte character: the mirror must reassemble it.
    const euro = Buffer.from("€ end");
    mirror.write(output);
    mirror.write(euro.subarray(0, 1));
    mirror.write(euro.subarray(1));
    direct.write(Buffer.concat([output, euro]));

    const { snapshot, offset } = await mirror.snapshot();
    expect(offset).toBe(output.length + euro.length);
    const replayed = new HeadlessTerminal({
      cols: snapshot.cols,
      rows: snapshot.rows,
      scrollback: 1000,
      allowProposedApi: true,
    });
    replayed.write(snapshot.data);
    expect(await screenOf(replayed)).toEqual(await screenOf(direct));
    expect(replayed.buffer.active.cursorX).toBe(direct.buffer.active.cursorX);
    expect((await screenOf(replayed)).join("\n")).toContain("€ end");
    mirror.dispose();
  });

  it("captures exactly what was written before the request, and names that offset", async () => {
    const mirror = new ScreenMirror(20, 5);
    mirror.write(Buffer.from("before\r\n"));
    const pending = mirror.snapshot();
    mirror.write(Buffer.from("after\r\n"));
    const { snapshot, offset } = await pending;
    expect(snapshot.data).toContain("before");
    expect(snapshot.data).not.toContain("after");
    expect(offset).toBe("before\r\n".length);
    expect(mirror.since(offset)!.toString()).toBe("after\r\n");
    mirror.dispose();
  });

  it("rebuilds the screen from its ring when output overran what the worker had parsed", async () => {
    const mirror = new ScreenMirror(40, 10);
    const direct = new HeadlessTerminal({ cols: 40, rows: 10, scrollback: 1000, allowProposedApi: true });
    // Twice the ring's size in one synchronous burst (as an exited shell is drained): the worker
    // cannot parse any of it before the ring goes round over bytes it has not read.
    let total = 0;
    for (let line = 0; total < 2 * MIRROR_RING_BYTES;) {
      const chunk = Buffer.from(Array.from({ length: 2000 }, () => `row ${line++}\r\n`).join(""));
      mirror.write(chunk);
      direct.write(chunk);
      total += chunk.length;
    }
    const { snapshot, offset } = await mirror.snapshot();
    expect(offset).toBe(total);
    const replayed = new HeadlessTerminal({ cols: 40, rows: 10, scrollback: 1000, allowProposedApi: true });
    replayed.write(snapshot.data);
    expect(await screenOf(replayed)).toEqual(await screenOf(direct));
    mirror.dispose();
  });
});

describe("terminal viewers", () => {
  const manager = new PtyManager({
    terminalsOf: async () => ({ cwd: process.cwd(), open: localPtyOpener({ shell: "bash" }) }),
  });
  afterEach(() => manager.closeAll());

  function sink(overrides: Partial<ViewerSink> = {}) {
    const events: string[] = [];
    let bytes = 0;
    const value: ViewerSink & { events: string[]; bytes: () => number } = {
      events,
      bytes: () => bytes,
      data: (chunk) => {
        bytes += chunk.length;
        events.push("data");
      },
      snapshot: () => events.push("snapshot"),
      resync: () => events.push("resync"),
      exit: () => events.push("exit"),
      ...overrides,
    };
    return value;
  }

  it("sends the snapshot before any live output", async () => {
    const info = await manager.create("s1");
    const terminal = manager.get("s1", info.terminalId);
    // A viewer from the start tells when the loop's output begins and when it has ended.
    let text = "";
    terminal.attach("from-start", sink({ data: (chunk) => void (text += Buffer.from(chunk).toString("latin1")) }));
    const ackAll = setInterval(() => ["from-start", "v"].forEach((id) => terminal.ack(id, 1_000_000)), 5);
    terminal.input(null, "for i in $(seq 1 2000); do echo row-$i; done\r");
    await waitFor(() => text.includes("row-1\r\n"), 10_000, "the loop's first line");
    const viewer = sink();
    terminal.attach("v", viewer, { cols: 80, rows: 24 });
    await waitFor(
      () => text.includes("row-2000\r\n") && viewer.events.includes("snapshot"),
      10_000,
      "the loop's last line, and the late viewer's snapshot",
    );
    clearInterval(ackAll);
    expect(viewer.events[0]).toBe("snapshot");
    expect(viewer.events.filter((event) => event === "snapshot")).toHaveLength(1);
  });

  it("drops a viewer that never acknowledges to resync, lets the others continue, and re-syncs it once it caught up", async () => {
    const info = await manager.create("s2");
    const terminal = manager.get("s2", info.terminalId);
    const fast = sink();
    const slow = sink();
    terminal.attach("fast", fast, { cols: 80, rows: 24 });
    terminal.attach("slow", slow);
    const ackFast = setInterval(() => terminal.ack("fast", 1_000_000), 2);
    terminal.input("fast", "yes | head -c 3000000; echo END\r");
    await waitFor(
      () => fast.bytes() > 3_000_000 && slow.events.includes("resync"),
      15_000,
      "the output to pass the fast viewer, and the slow one to be dropped",
    );
    expect(slow.events).toContain("resync");
    const slowBytes = slow.bytes();
    expect(slowBytes).toBeLessThan(HIGH_WATERMARK_BYTES + 3 * MAX_BATCH_BYTES); // Bounded by the watermark plus a batch or two.
    expect(fast.bytes()).toBeGreaterThan(3_000_000);
    // The slow viewer acknowledges what it had: it gets the current screen, then live output again.
    const dropped = slow.events.length;
    terminal.ack("slow", slowBytes);
    await waitFor(() => slow.events.length > dropped, 10_000, "the slow viewer's re-sync");
    expect(slow.events[dropped]).toBe("snapshot");
    clearInterval(ackFast);
  }, 20_000);

  it("gives viewers attached during continuous output a snapshot plus tail that equals what a viewer attached from the start saw", async () => {
    const info = await manager.create("s3", { cols: 80, rows: 24 });
    const terminal = manager.get("s3", info.terminalId);
    /** Set once every viewer has all the output: what comes after (a prompt) is not recorded. */
    let frozen = false;
    /** A viewer that records its snapshot and every byte after it, and acknowledges everything at once. */
    const recorder = () => {
      const record = Object.assign(sink(), {
        screen: null as ScreenSnapshot | null,
        chunks: [] as Buffer[],
        order: [] as string[],
      });
      record.snapshot = (snapshot) => {
        record.order.push("snapshot");
        record.screen = snapshot;
      };
      record.data = (chunk) => {
        if (frozen) return;
        record.order.push("data");
        record.chunks.push(Buffer.from(chunk));
      };
      return record;
    };
    const first = recorder();
    terminal.attach("first", first, { cols: 80, rows: 24 });
    const late: Array<ReturnType<typeof recorder>> = [];
    const ackAll = setInterval(() => {
      terminal.ack("first", 1_000_000);
      late.forEach((viewer, i) => terminal.ack(`late-${i}`, 1_000_000));
    }, 2);
    // Long enough (and fast enough) that the mirror skips scrolled-out text and viewers join mid-stream.
    terminal.input(null, "seq 1 600000 | sed 's/^/line-/'; printf '\\e[1;32mDONE\\e[0m-%s\\n' $((1+1))\r");
    const doneMarker = "\x1b[1;32mDONE\x1b[0m-2";
    const seen = () => Buffer.concat(first.chunks.slice(-2)).toString("latin1");
    // Viewers join at points spread over the stream, by how much the first one has seen.
    const received = () => first.chunks.reduce((sum, chunk) => sum + chunk.length, 0);
    await waitFor(
      () => {
        if (late.length < 6 && received() >= (late.length + 1) * 700_000) {
          const viewer = recorder();
          terminal.attach(`late-${late.length}`, viewer);
          late.push(viewer);
        }
        return seen().includes(doneMarker);
      },
      40_000,
      "the DONE marker",
    );
    // Every late viewer has caught up when its last bytes are the first viewer's (the lines are all different).
    const lastBytes = (chunks: Buffer[]) => Buffer.concat(chunks.slice(-32)).subarray(-32);
    await waitFor(
      () =>
        late.every((viewer) => viewer.chunks.length > 0 && lastBytes(viewer.chunks).equals(lastBytes(first.chunks))),
      10_000,
      "every late viewer to have all the output",
    );
    frozen = true;
    clearInterval(ackAll);
    expect(seen()).toContain(doneMarker);

    const all = Buffer.concat(first.chunks);
    const screenFrom = async (snapshot: ScreenSnapshot | null, chunks: Buffer[]) => {
      const term = new HeadlessTerminal({ cols: 80, rows: 24, scrollback: 1000, allowProposedApi: true });
      if (snapshot) term.write(snapshot.data);
      for (const chunk of chunks) term.write(chunk);
      const lines = await screenOf(term);
      term.dispose();
      return lines;
    };
    const expected = await screenFrom(first.screen, first.chunks);
    let midStream = 0;
    for (const viewer of late) {
      expect(viewer.order[0]).toBe("snapshot");
      expect(viewer.order.filter((event) => event === "snapshot")).toHaveLength(1);
      const tail = Buffer.concat(viewer.chunks);
      // Live bytes are exactly the end of what the first viewer got: nothing lost, nothing twice.
      expect(tail.length).toBeLessThanOrEqual(all.length);
      expect(tail.equals(all.subarray(all.length - tail.length))).toBe(true);
      // And the snapshot is the screen at exactly the byte where that tail starts.
      expect(await screenFrom(viewer.screen, viewer.chunks)).toEqual(expected);
      const atSnapshot = await screenFrom(first.screen, [all.subarray(0, all.length - tail.length)]);
      expect(await screenFrom(viewer.screen, [])).toEqual(atSnapshot);
      if (tail.length > 0 && tail.length < all.length - 100_000) midStream++;
    }
    expect(midStream).toBeGreaterThan(2);
  }, 60_000);
});
