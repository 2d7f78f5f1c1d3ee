import { describe, expect, it } from "vitest";
import { WorldlineError } from "../../../server/errors";
import type { RunnerRequest } from "../../../server/protocol";
import { RunnerLink } from "../../../server/runners/link";

/** A bridge's link to a runner whose socket is on other bridges of the deployment (server/runners/relay.ts). */
describe("a runner reached through another bridge", () => {
  function link(graceMs = 10_000) {
    const logs: string[] = [];
    const runner = new RunnerLink("north", { graceMs, log: (line) => logs.push(line), route: () => "bridge-b" });
    return { runner, logs };
  }

  function through(sent: RunnerRequest[]) {
    return (request: RunnerRequest) => sent.push(request);
  }

  it("sends this bridge's route and the turn's fence, and takes the answer passed back", async () => {
    const { runner } = link();
    const sent: RunnerRequest[] = [];
    runner.attachVia("bridge-a", "process-1", through(sent));
    expect(runner.connected && !runner.local && runner.via).toBe("bridge-a");
    const fenced = runner.call({ op: "stat", path: "/w/a.txt" }, { fence: { sessionId: "s1", epoch: 4 } });
    const unfenced = runner.call({ op: "pty.input", ptyId: "p1", data: "x" });
    expect(sent.map(({ route, sessionId, epoch }) => ({ route, sessionId, epoch }))).toEqual([
      { route: "bridge-b", sessionId: "s1", epoch: 4 },
      { route: "bridge-b", sessionId: undefined, epoch: 0 },
    ]);
    runner.receive("runner.response", { id: sent[0].id, ok: true, result: null, route: "bridge-b" });
    runner.receive("runner.response", { id: sent[1].id, ok: true, result: null, route: "bridge-b" });
    await expect(fenced).resolves.toBeNull();
    await expect(unfenced).resolves.toBeNull();
  });

  it("sends a request again where the same runner process comes back, and fails it when another process does", async () => {
    const { runner, logs } = link();
    const viaA: RunnerRequest[] = [];
    const viaC: RunnerRequest[] = [];
    runner.attachVia("bridge-a", "process-1", through(viaA));
    const first = runner.call({ op: "readText", path: "/w/a.txt" });
    // Another bridge's loss is not this connection's.
    runner.lostVia("bridge-x");
    expect(runner.connected).toBe(true);
    runner.lostVia("bridge-a");
    expect(runner.connected).toBe(false);
    runner.attachVia("bridge-c", "process-1", through(viaC));
    expect(viaC.map((request) => request.id)).toEqual([viaA[0].id]);
    // Told again where it already is: nothing is sent twice.
    runner.attachVia("bridge-c", "process-1", through(viaC));
    expect(viaC).toHaveLength(1);
    runner.receive("runner.response", { id: viaA[0].id, ok: true, result: "hello" });
    await expect(first).resolves.toBe("hello");
    // An answer to a request it was not sent is refused and logged.
    runner.receive("runner.response", { id: viaA[0].id, ok: true, result: "again" });
    expect(logs.at(-1)).toMatch(/not sent; refused/);

    const second = runner.call({ op: "readText", path: "/w/b.txt" });
    runner.lostVia("bridge-c");
    runner.attachVia("bridge-a", "process-2", through(viaA));
    await expect(second).rejects.toMatchObject({ code: "runner:restarted" });
  });

  it("fails what waits once the grace ends without the runner back", async () => {
    const { runner } = link(50);
    runner.attachVia("bridge-a", "process-1", through([]));
    const waiting = runner.call({ op: "stat", path: "/w/a.txt" });
    runner.lostVia("bridge-a");
    const error = await waiting.catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(WorldlineError);
    expect(error).toMatchObject({ code: "runner:gone" });
  });

  it("stops waiting for a runner that is away once the hub shuts down, and still reaches one that is there", async () => {
    const { runner } = link(60_000);
    const sent: RunnerRequest[] = [];
    runner.attachVia("bridge-a", "process-1", through(sent));
    const waiting = runner.call({ op: "stat", path: "/w/a.txt" });
    runner.lostVia("bridge-a");
    const shutdown = new WorldlineError("runner:gone", "The hub is shutting down.");
    runner.stop(shutdown);
    await expect(waiting).rejects.toBe(shutdown);
    await expect(runner.call({ op: "stat", path: "/w/b.txt" })).rejects.toBe(shutdown);

    const { runner: present } = link(60_000);
    const toPresent: RunnerRequest[] = [];
    present.attachVia("bridge-a", "process-1", through(toPresent));
    present.stop(shutdown);
    const stopped = present.call({ op: "stat", path: "/w/c.txt" });
    expect(toPresent).toHaveLength(1);
    present.receive("runner.response", { id: toPresent[0].id, ok: true, result: null, route: "bridge-b" });
    await expect(stopped).resolves.toBeNull();
    // Gone after that: nothing waits the grace.
    const late = present.call({ op: "stat", path: "/w/d.txt" });
    present.lostVia("bridge-a");
    await expect(late).rejects.toBe(shutdown);
  });
});
