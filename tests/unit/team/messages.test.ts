import { describe, expect, it } from "vitest";
import { TeamMessage, TeamMethods } from "../../../server/team/messages";

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
