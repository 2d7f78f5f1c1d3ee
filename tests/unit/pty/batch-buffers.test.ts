import { describe, expect, it } from "vitest";
import { BatchBuffers, type Ledger } from "../../../server/pty/batch-buffers";

/** Sends `bytes` of the current buffer to each of `ledgers`, as Terminal.flushBatch does. */
function send(buffers: BatchBuffers, bytes: number, ...ledgers: Ledger[]): void {
  for (const ledger of ledgers) {
    ledger.sent += bytes;
    buffers.sent(ledger);
  }
}

describe("BatchBuffers", () => {
  it("reuses a used-up buffer once every viewer it went to has acknowledged it, and not before", () => {
    const buffers = new BatchBuffers();
    const a: Ledger = { sent: 0, acked: 0 };
    const b: Ledger = { sent: 0, acked: 0 };
    const first = buffers.take();
    send(buffers, 100, a, b);
    send(buffers, 50, a, b);
    const second = buffers.take(); // The first is used up, both viewers owe 150 bytes of it.
    expect(second === first).toBe(false); // not `.not.toBe`: on a miss it compares two 512 KB buffers element by element (seconds)
    send(buffers, 10, a, b);
    a.acked = 150;
    b.acked = 149;
    buffers.release();
    const third = buffers.take();
    expect([first, second]).not.toContain(third);
    b.acked = 150;
    buffers.release();
    expect(buffers.take()).toBe(third); // Nobody was sent any of it: free at once, and last in, first out.
    send(buffers, 1, a);
    expect(buffers.take()).toBe(first);
  });

  it("never reuses what a viewer that detached still owed, and goes on reusing the rest", () => {
    const buffers = new BatchBuffers();
    const stays: Ledger = { sent: 0, acked: 0 };
    const leaves: Ledger = { sent: 0, acked: 0 };
    const owed = buffers.take();
    send(buffers, 100, stays, leaves);
    const settled = buffers.take();
    send(buffers, 100, stays); // Only the one that stays got this one.
    buffers.abandon(leaves);
    stays.acked = 200;
    leaves.acked = 100; // Too late: its socket may have been writing `owed` when it left.
    const next = [buffers.take(), buffers.take(), buffers.take()];
    expect(next).toContain(settled);
    expect(next).not.toContain(owed);
  });

  it("hands back a buffer nobody was sent at once, and nothing after clear()", () => {
    const buffers = new BatchBuffers();
    const alone = buffers.take();
    expect(buffers.take()).toBe(alone);
    const viewer: Ledger = { sent: 0, acked: 0 };
    const sent = buffers.take();
    send(buffers, 10, viewer);
    buffers.clear();
    viewer.acked = 10;
    buffers.release();
    const after = [buffers.take(), buffers.take()];
    expect(after).not.toContain(sent);
  });
});
