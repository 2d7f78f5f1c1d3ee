import { describe, expect, it } from "vitest";
import { FlowControl } from "../../../server/pty";

function setup() {
  let now = 0;
  const flow = new FlowControl({ high: 100, low: 10, stalledMs: 1_000, now: () => now });
  return { flow, advance: (ms: number) => (now += ms) };
}

describe("FlowControl", () => {
  it("pauses above the high watermark and resumes only below the low one", () => {
    const { flow } = setup();
    flow.add("a");
    flow.sent("a", 100);
    expect(flow.decide()).toBeNull();
    flow.sent("a", 1);
    expect(flow.decide()).toBe("pause");
    expect(flow.decide()).toBeNull();
    flow.acked("a", 50);
    expect(flow.decide()).toBeNull(); // 51 outstanding: between the watermarks nothing flaps.
    flow.acked("a", 42);
    expect(flow.decide()).toBe("resume");
    expect(flow.isPaused()).toBe(false);
  });

  it("stays paused while any consumer is behind", () => {
    const { flow } = setup();
    flow.add("fast");
    flow.add("slow");
    flow.sent("fast", 200);
    flow.sent("slow", 200);
    expect(flow.decide()).toBe("pause");
    flow.acked("fast", 200);
    expect(flow.decide()).toBeNull();
    flow.acked("slow", 195);
    expect(flow.decide()).toBe("resume");
  });

  it("reports a consumer that holds the pty paused too long, but never a pinned one", () => {
    const { flow, advance } = setup();
    flow.add("mirror", { pinned: true });
    flow.add("tab");
    flow.sent("mirror", 500);
    flow.sent("tab", 500);
    advance(999);
    expect(flow.stalled()).toEqual([]);
    advance(1);
    expect(flow.stalled()).toEqual(["tab"]);
  });

  it("ignores a consumer dropped from counting but keeps its outstanding bytes", () => {
    const { flow } = setup();
    flow.add("a");
    flow.add("b");
    flow.sent("b", 500);
    expect(flow.decide()).toBe("pause");
    flow.setCounting("b", false);
    expect(flow.decide()).toBe("resume");
    expect(flow.stalled()).toEqual([]);
    expect(flow.unacked("b")).toBe(500);
    flow.acked("b", 500);
    expect(flow.unacked("b")).toBe(0);
  });

  it("clamps acknowledgements beyond what was sent and forgets removed consumers", () => {
    const { flow } = setup();
    flow.add("a");
    flow.sent("a", 20);
    flow.acked("a", 1_000);
    expect(flow.unacked("a")).toBe(0);
    flow.sent("a", 500);
    expect(flow.decide()).toBe("pause");
    flow.remove("a");
    expect(flow.decide()).toBe("resume");
    flow.sent("a", 10);
    expect(flow.unacked("a")).toBe(0);
  });

  it("sets a consumer's outstanding bytes exactly after a snapshot, and counts it stalled only while over the high mark", () => {
    const { flow, advance } = setup();
    flow.add("a");
    flow.sent("a", 500);
    flow.reset("a", 150);
    expect(flow.unacked("a")).toBe(150);
    advance(1_000);
    expect(flow.stalled()).toEqual(["a"]);
    flow.reset("a", 20);
    expect(flow.stalled()).toEqual([]);
    expect(flow.decide()).toBeNull();
  });
});
