import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import type { RedisLink } from "../../../server/bus";
import { TerminalOwners } from "../../../server/team/terminal-owners";

/** A link whose subscriber hears what the test says it heard, and whose publishes are recorded. */
function fakeLink() {
  const sub = new EventEmitter();
  const published: [string, string][] = [];
  const link = {
    prefix: "wlt",
    sub,
    pub: { publish: async (channel: string, message: string) => void published.push([channel, message]) },
  } as unknown as RedisLink;
  const hear = (message: string) => sub.emit("message", "wlt:pty:owners", message);
  return { link, published, hear };
}

describe("remembered terminal owners", () => {
  it("drops a terminal's owner when its change is announced, and keeps the others", () => {
    const { link, hear } = fakeLink();
    const owners = new TerminalOwners(link);
    owners.remember("s1", "t1", "bridge-a", owners.since());
    owners.remember("s1", "t2", "bridge-a", owners.since());
    hear(JSON.stringify({ sessionId: "s1", terminalId: "t1" }));
    expect(owners.cached("s1", "t1")).toBeUndefined();
    expect(owners.cached("s1", "t2")).toBe("bridge-a");
  });

  it("does not remember a lookup that an announcement overtook", () => {
    const { link, hear } = fakeLink();
    const owners = new TerminalOwners(link);
    const since = owners.since(); // the registry read starts
    hear(JSON.stringify({ sessionId: "s1", terminalId: "t1" })); // the terminal ends before the answer lands
    owners.remember("s1", "t1", "bridge-a", since);
    expect(owners.cached("s1", "t1")).toBeUndefined();
  });

  it("forgets everything on an announcement it cannot read", () => {
    const { link, hear } = fakeLink();
    const owners = new TerminalOwners(link);
    owners.remember("s1", "t1", "bridge-a", owners.since());
    hear("not json");
    expect(owners.size).toBe(0);
  });

  it("announces on the deployment's channel", async () => {
    const { link, published } = fakeLink();
    await new TerminalOwners(link).announce({ sessionId: "s1", terminalId: "t1" });
    expect(published).toEqual([["wlt:pty:owners", JSON.stringify({ sessionId: "s1", terminalId: "t1" })]]);
  });
});
