import { describe, expect, it } from "vitest";
import { compactPrompt, withTypedCommand } from "../../../server/agent";

describe("/compact typed where people type text", () => {
  it("becomes the compact option, with its focus, at the edge", () => {
    expect(withTypedCommand("/compact", { reasoning: "on" })).toEqual({ reasoning: "on", compact: {} });
    expect(withTypedCommand("  /compact keep the questions ", {})).toEqual({
      compact: { focus: "keep the questions" },
    });
  });

  it("leaves every other prompt as it is", () => {
    expect(withTypedCommand("please /compact this", {})).toEqual({});
    expect(withTypedCommand("/compaction", {})).toEqual({});
  });

  it("names a compaction turn as people would have typed it", () => {
    expect(compactPrompt()).toBe("/compact");
    expect(compactPrompt("keep the plan")).toBe("/compact keep the plan");
  });
});
