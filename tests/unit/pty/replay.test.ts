import headlessPackage from "@xterm/headless";
import { afterEach, describe, expect, it } from "vitest";
import { PtyManager, type ScreenSnapshot, type ViewerSink } from "../../../server/pty";
import { ScreenMirror } from "../../../server/pty/mirror";

const { Terminal: HeadlessTerminal } = headlessPackage;

function screenOf(term: InstanceType<typeof HeadlessTerminal>): Promise<string[]> {
  return new Promise((resolve) =>
    term.write("", () => {
      const buffer = term.buffer.active;
      resolve(Array.from({ length: buffer.length }, (_, y) => buffer.getLine(y)?.translateToString(true) ?? ""));
    }),
  );
}

function parsed(mirror: ScreenMirror): Promise<void> {
  return new Promise((resolve) => mirror.afterPending(resolve));
}

describe("ScreenMirror snapshots", () => {
  it("rebuild the screen, scrollback, colours and cursor in a fresh xterm", async () => {
    const mirror = new ScreenMirror(40, 10);
    const direct = new HeadlessTerminal({ cols: 40, rows: 10, scrollback: 1000, allowProposedApi: true });
    const output = Buffer.from(Array.from({ length: 30 }, (_, i) => `line ${i} \x1b[1;3${i % 8}mcolour\x1b[0m\r\n`).join("") + "prompt$ ab\x1b[2D");
    // Split inside a multi-byte character: the mirror must reassemble it.
    const euro = Buffer.from("€ end");
    mirror.write(output, () => {});
    mirror.write(euro.subarray(0, 1), () => {});
    mirror.write(euro.subarray(1), () => {});
    direct.write(Buffer.concat([output, euro]));
    await parsed(mirror);

    const snapshot = mirror.snapshot();
    const replayed = new HeadlessTerminal({ cols: snapshot.cols, rows: snapshot.rows, scrollback: 1000, allowProposedApi: true });
    replayed.write(snapshot.data);
    expect(await screenOf(replayed)).toEqual(await screenOf(direct));
    expect(replayed.buffer.active.cursorX).toBe(direct.buffer.active.cursorX);
    expect((await screenOf(replayed)).join("\n")).toContain("€ end");
    mirror.dispose();
  });

  it("captures exactly what was written before the sync point", async () => {
    const mirror = new ScreenMirror(20, 5);
    mirror.write(Buffer.from("before\r\n"), () => {});
    let snapshot: ScreenSnapshot | null = null;
    mirror.afterPending(() => (snapshot = mirror.snapshot()));
    mirror.write(Buffer.from("after\r\n"), () => {});
    await parsed(mirror);
    expect(snapshot!.data).toContain("before");
    expect(snapshot!.data).not.toContain("after");
    mirror.dispose();
  });
});

describe("terminal viewers", () => {
  const manager = new PtyManager({ workspaceOf: async () => process.cwd(), shell: "bash" });
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
    terminal.input(null, "for i in $(seq 1 2000); do echo row-$i; done\r");
    await new Promise((resolve) => setTimeout(resolve, 50));
    const viewer = sink();
    terminal.attach("v", viewer, { cols: 80, rows: 24 });
    const ackAll = setInterval(() => terminal.ack("v", 1_000_000), 5);
    await new Promise((resolve) => setTimeout(resolve, 500));
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
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    expect(slow.events).toContain("resync");
    const slowBytes = slow.bytes();
    expect(slowBytes).toBeLessThan(400_000); // Bounded by the watermark plus a batch or two.
    expect(fast.bytes()).toBeGreaterThan(3_000_000);
    // The slow viewer acknowledges what it had: it gets the current screen, then live output again.
    terminal.ack("slow", slowBytes);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(slow.events.at(-1)).toBe("snapshot");
    clearInterval(ackFast);
  }, 20_000);
});
