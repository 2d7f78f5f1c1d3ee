import { beforeAll, describe, expect, it } from "vitest";
import { classifyCommand, loadShellParser } from "../../../server/tools";
import { SHELL_TABLE } from "./shell-table";

// The grammar loads once, before the first classification (server/tools/shell/parse.ts).
beforeAll(() => loadShellParser());

const RANK = { none: 0, low: 1, medium: 2, high: 3 } as const;

describe("the shell classifier's table", () => {
  it("has at least 60 commands", () => {
    expect(SHELL_TABLE.length).toBeGreaterThanOrEqual(60);
  });

  it.each(SHELL_TABLE)("%j → %s %s", (command, risk, action) => {
    const c = classifyCommand(command);
    expect({ risk: c.risk, actionType: c.actionType }).toEqual({ risk, actionType: action });
  });

  it.each([
    "{ rm -rf ~; }",
    "! rm -rf ~",
    "for f in ~; do rm -rf $f; done",
    "f() { rm -rf ~; }; f",
    "cat <<EOF\n$(rm -rf ~)\nEOF",
    "echo $(rm -rf ~)",
    "if true; then rm -rf ~; fi",
  ])("%j is never rated below rm -rf ~, and is never simple", (command) => {
    const bare = classifyCommand("rm -rf ~");
    const c = classifyCommand(command);
    expect(RANK[c.risk]).toBeGreaterThanOrEqual(RANK[bare.risk]);
    expect(c.actionType).toBe(bare.actionType);
    expect(c.simple).toBe(false);
    expect(c.allowlisted).toBe(false);
  });
});
