import { describe, expect, it } from "vitest";
import { classifyCommand } from "../../../server/tools";
import { SHELL_TABLE } from "./shell-table";

const RANK = { none: 0, low: 1, medium: 2, high: 3 } as const;

describe("the shell classifier's table", () => {
  it("has at least 60 commands", async () => {
    expect(SHELL_TABLE.length).toBeGreaterThanOrEqual(60);
  });

  it.each(SHELL_TABLE)("%j → %s %s", async (command, risk, action) => {
    const c = await classifyCommand(command);
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
  ])("%j is never rated below rm -rf ~, and is never simple", async (command) => {
    const bare = await classifyCommand("rm -rf ~");
    const c = await classifyCommand(command);
    expect(RANK[c.risk]).toBeGreaterThanOrEqual(RANK[bare.risk]);
    expect(c.actionType).toBe(bare.actionType);
    expect(c.simple).toBe(false);
    expect(c.allowlisted).toBe(false);
  });
});
