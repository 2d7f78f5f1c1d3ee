import { describe, expect, it } from "vitest";
import { TeamMessage, TeamMethods, TeamReplies, TerminalEntry } from "../../../server/team/messages";

describe("messages between bridges", () => {
  it("parses each method's arguments, JSON's nulls in image previews included", () => {
    const prompt = TeamMethods["turn.prompt"].parse({
      sessionId: "s1",
      text: "hi",
      options: { images: ["data:a", "data:b"], imagePreviews: ["data:x", null] },
    });
    expect(prompt.options?.imagePreviews).toEqual(["data:x", undefined]);
    expect(TeamMethods["pty.out"].parse({ viewer: "o/v", kind: "exit", exitCode: null })).toEqual({
      viewer: "o/v",
      kind: "exit",
      exitCode: null,
    });
  });

  it("refuses what does not fit, with the field named", () => {
    const resize = TeamMethods["pty.resize"].safeParse({
      sessionId: "s1",
      terminalId: "t1",
      viewer: "v",
      cols: -1,
      rows: 24,
    });
    expect(resize.success).toBe(false);
    expect(resize.error?.issues[0].path).toEqual(["cols"]);
    expect(TeamMethods["turn.prompt"].safeParse({ sessionId: "s1" }).success).toBe(false);
    expect(TeamMethods["pty.out"].safeParse({ viewer: "v", kind: "paint" }).success).toBe(false);
    expect(TeamMessage.safeParse({ kind: "shout", from: "o-1" }).success).toBe(false);
    expect(TeamMessage.safeParse({ kind: "call", id: "1", from: "o-1", method: "turn.cancel", args: {} }).success).toBe(
      true,
    );
  });
});

describe("answers and records between bridges", () => {
  it("reads each called method's answer with its schema and refuses one of another shape", () => {
    expect(TeamReplies["turn.prompt"].parse({ turnId: "t1", queued: false })).toEqual({ turnId: "t1", queued: false });
    expect(TeamReplies["pty.close"].parse(null)).toBeNull();
    expect(TeamReplies["turn.prompt"].safeParse({ turnId: 7 }).success).toBe(false);
    expect(TeamReplies["turn.cancel"].safeParse("yes").success).toBe(false);
  });

  it("reads a terminal recorded in Redis only when it names its owner and the terminal", () => {
    const info = {
      terminalId: "t1",
      sessionId: "s1",
      title: "bash",
      pid: 1,
      cols: 80,
      rows: 24,
      viewers: 0,
      createdAt: "x",
    };
    expect(TerminalEntry.parse({ owner: "b1", info })).toEqual({ owner: "b1", info });
    expect(TerminalEntry.safeParse({ owner: "b1" }).success).toBe(false);
    expect(TerminalEntry.safeParse({ info }).success).toBe(false);
  });
});
