import { describe, expect, it } from "vitest";
import { applyEvents, emptyTranscript, type EventEnvelope, type SessionEvent } from "../../../server/protocol";

let seq = 0;
const at = (event: SessionEvent): EventEnvelope =>
  ({ seq: ++seq, createdAt: new Date(0).toISOString(), ...event }) as EventEnvelope;
const created = (checkpointId: string, number: number) =>
  at({ type: "checkpoint.created", payload: { checkpointId, number, turn: number, step: 0, reason: "turn" } });
const user = (text: string) =>
  at({ type: "message.user", payload: { turnId: `t-${text}`, messageId: `m-${text}`, text } });
const rewound = (checkpointId: string, undoCheckpointId: string, conversation = true, undo = false) =>
  at({
    type: "checkpoint.rewound",
    payload: {
      checkpointId,
      number: 0,
      undoCheckpointId,
      undoNumber: 9,
      conversation,
      files: true,
      written: 1,
      deleted: 0,
      ...(undo ? { undo } : {}),
    },
  });
const texts = (events: EventEnvelope[]) =>
  applyEvents(emptyTranscript(), events).items.map((item) => (item.kind === "user" ? item.text : item.kind));

describe("transcript reducer and rewinds", () => {
  it("shows the conversation as it was at the checkpoint, plus a notice", () => {
    expect(
      texts([created("c0", 0), user("one"), created("c1", 1), user("two"), created("r", 2), rewound("c1", "r")]),
    ).toEqual(["one", "notice"]);
  });

  it("undoing a rewind brings the hidden items back", () => {
    const log = [
      created("c0", 0),
      user("one"),
      created("c1", 1),
      user("two"),
      created("r", 2),
      rewound("c0", "r"),
      created("r2", 3),
      rewound("r", "r2", true, true),
    ];
    expect(texts(log)).toEqual(["one", "two", "notice"]);
  });

  it("a files-only rewind leaves the conversation", () => {
    expect(texts([created("c0", 0), user("one"), created("r", 1), rewound("c0", "r", false)])).toEqual([
      "one",
      "notice",
    ]);
  });
});
