import { describe, expect, it } from "vitest";
import { emptyTranscript, type TranscriptItem, type TranscriptState } from "../../../server/protocol";
import { announcementsBetween } from "../../../components/session/announcements";
import { exitCodeOf, toolCardName } from "../../../components/session/tool-name";

type ToolItem = Extract<TranscriptItem, { kind: "tool" }>;

const state = (patch: Partial<TranscriptState>): TranscriptState => ({ ...emptyTranscript(), ...patch });
const answer = (text: string, done: boolean): TranscriptItem => ({
  kind: "assistant",
  id: "a1",
  turnId: "t1",
  text,
  reasoning: "",
  done,
});
const tool = (patch: Partial<ToolItem>): ToolItem => ({
  kind: "tool",
  id: "c1",
  turnId: "t1",
  name: "shell",
  args: { command: "npm test" },
  state: "completed",
  progress: "",
  ...patch,
});

describe("what the session's live region says", () => {
  it("an answer once, when it is complete, not per token", () => {
    const running = { turnId: "t1", stage: "answering" as const };
    const partial = state({ items: [answer("Hel", false)], running });
    const more = state({ items: [answer("Hello **there**", false)], running });
    const done = state({ items: [answer("Hello **there**", true)], running });
    const finished = state({ items: [answer("Hello **there**", true)], running: null });
    expect(announcementsBetween(state({ running }), partial)).toEqual([]);
    expect(announcementsBetween(partial, more)).toEqual([]);
    expect(announcementsBetween(more, done)).toEqual(["Agent: Hello there"]);
    expect(announcementsBetween(done, finished)).toEqual(["Turn finished."]);
    expect(announcementsBetween(finished, finished)).toEqual([]);
  });

  it("an approval that starts waiting, and an error notice, once", () => {
    const approval = {
      approvalId: "p1",
      toolCallId: "c1",
      tool: "shell",
      args: { command: "rm -rf build" },
      description: "Run a command",
      riskLevel: "high",
      kind: "tool" as const,
    };
    const waiting = state({ approvals: { p1: approval } });
    expect(announcementsBetween(state({}), waiting)).toEqual(["Approval needed, high risk: shell: rm -rf build"]);
    expect(announcementsBetween(waiting, waiting)).toEqual([]);
    const failed = state({ items: [{ kind: "notice", id: "n1", level: "error", text: "The provider refused" }] });
    expect(announcementsBetween(state({}), failed)).toEqual(["Error: The provider refused"]);
    expect(announcementsBetween(failed, failed)).toEqual([]);
  });
});

describe("a tool card's accessible name", () => {
  it("says tool, subject, approval and exit code", () => {
    const output = "3 passing\n[exit code: 0]";
    expect(toolCardName(tool({ output, approvalStatus: "approved" }))).toBe("shell: npm test, approved, exit 0");
    expect(toolCardName(tool({ output: "boom\n[exit code: 2]", state: "error", isError: true }))).toBe(
      "shell: npm test, exit 2",
    );
    expect(toolCardName(tool({ state: "waiting_approval" }))).toBe("shell: npm test, needs approval");
    expect(toolCardName(tool({ name: "read_file", args: { path: "src/a.ts" }, state: "running" }))).toBe(
      "read_file: src/a.ts, running",
    );
    expect(exitCodeOf("no code here")).toBeNull();
  });
});
