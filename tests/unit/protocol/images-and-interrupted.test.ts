import { describe, expect, it } from "vitest";
import {
  applyEvents,
  base64Bytes,
  clientCommands,
  emptyTranscript,
  imageRef,
  MAX_PROMPT_IMAGE_BYTES,
  MAX_PROMPT_IMAGES,
  PromptImage,
  type EventEnvelope,
} from "../../../server/protocol";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const JPEG_HEAD = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1]).toString("base64");
const WEBP_HEAD = Buffer.concat([Buffer.from("RIFF"), Buffer.from([0x24, 0, 0, 0]), Buffer.from("WEBPVP8 ")]).toString(
  "base64",
);

describe("prompt images", () => {
  it("accept the four types by their magic bytes, not their label", () => {
    expect(PromptImage.safeParse({ mediaType: "image/png", dataBase64: PNG }).success).toBe(true);
    expect(PromptImage.safeParse({ mediaType: "image/jpeg", dataBase64: JPEG_HEAD }).success).toBe(true);
    expect(PromptImage.safeParse({ mediaType: "image/webp", dataBase64: WEBP_HEAD }).success).toBe(true);
    expect(
      PromptImage.safeParse({
        mediaType: "image/gif",
        dataBase64: Buffer.from("GIF89a\x01\x00\x01\x00").toString("base64"),
      }).success,
    ).toBe(true);
    expect(PromptImage.safeParse({ mediaType: "image/jpeg", dataBase64: PNG }).success).toBe(false);
    expect(PromptImage.safeParse({ mediaType: "image/svg+xml", dataBase64: PNG }).success).toBe(false);
    expect(PromptImage.safeParse({ mediaType: "image/png", dataBase64: "not base64!" }).success).toBe(false);
  });

  it("cap each image and the prompt's total", () => {
    const justOver = PNG.slice(0, 24) + "A".repeat(Math.ceil(((MAX_PROMPT_IMAGE_BYTES + 3) * 4) / 3) - 24);
    expect(base64Bytes(justOver)).toBeGreaterThan(MAX_PROMPT_IMAGE_BYTES);
    expect(PromptImage.safeParse({ mediaType: "image/png", dataBase64: justOver }).success).toBe(false);
    const big = PNG.slice(0, 24) + "A".repeat(Math.floor((MAX_PROMPT_IMAGE_BYTES * 4) / 3) - 24);
    expect(PromptImage.safeParse({ mediaType: "image/png", dataBase64: big }).success).toBe(true);
    const prompt = (images: unknown[]) =>
      clientCommands["turn.prompt"].safeParse({ commandId: "cmd-12345678", sessionId: "s1", text: "hi", images });
    expect(
      prompt([
        { mediaType: "image/png", dataBase64: big },
        { mediaType: "image/png", dataBase64: big },
      ]).success,
    ).toBe(true);
    // Four near-cap images are over the total.
    expect(prompt(Array.from({ length: 4 }, () => ({ mediaType: "image/png", dataBase64: big }))).success).toBe(false);
    expect(
      prompt(Array.from({ length: MAX_PROMPT_IMAGES + 1 }, () => ({ mediaType: "image/png", dataBase64: PNG })))
        .success,
    ).toBe(false);
  });

  it("leave only a reference in the log", () => {
    expect(imageRef(`data:image/png;base64,${PNG}`, "data:image/webp;base64,AAAA")).toEqual({
      mediaType: "image/png",
      bytes: 70,
      preview: "data:image/webp;base64,AAAA",
    });
    expect(imageRef(`data:image/png;base64,${PNG}`)).toEqual({ mediaType: "image/png", bytes: 70 });
  });
});

describe("interrupted turns", () => {
  let seq = 0;
  const event = (type: string, payload: Record<string, unknown>): EventEnvelope =>
    ({ seq: ++seq, sessionId: "s1", type, payload, createdAt: new Date(0).toISOString() }) as unknown as EventEnvelope;

  it("are offered for resuming until another turn starts", () => {
    const events = [
      event("turn.started", { turnId: "t1", number: 1, prompt: "go" }),
      event("message.user", {
        turnId: "t1",
        messageId: "m1",
        text: "go",
        images: [{ mediaType: "image/png", bytes: 70 }],
      }),
      event("notice", {
        level: "warning",
        text: "The bridge stopped while this turn was running; it was interrupted.",
        turnId: "t1",
      }),
      event("turn.completed", { turnId: "t1", outcome: "interrupted" }),
    ];
    const after = applyEvents(emptyTranscript(), events);
    expect(after.items[0]).toMatchObject({ kind: "user", images: [{ mediaType: "image/png", bytes: 70 }] });
    expect(after.items.at(-1)).toEqual({ kind: "interrupted", id: "interrupted-t1", turnId: "t1", resumable: true });
    const resumed = applyEvents(after, [event("turn.started", { turnId: "t2", number: 2, prompt: "continue" })]);
    expect(resumed.items.find((item) => item.kind === "interrupted")).toMatchObject({ resumable: false });
    const cancelled = applyEvents(emptyTranscript(), [
      event("turn.started", { turnId: "t3", number: 1, prompt: "x" }),
      event("turn.completed", { turnId: "t3", outcome: "cancelled" }),
    ]);
    expect(cancelled.items.some((item) => item.kind === "interrupted")).toBe(false);
  });
});
