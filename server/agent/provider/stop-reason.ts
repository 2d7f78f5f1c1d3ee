import type { StopReason } from "../provider";

/** `finish_reason` values as providers spell them, in our five words (the public `stop_reason`, see this folder's README). */
const BY_FINISH: Record<string, Exclude<StopReason, "error">> = {
  length: "truncated",
  max_tokens: "truncated",
  model_length: "truncated",
  content_filter: "content_filter",
  refusal: "refused",
};

export function stopReasonOf(finishReason: string | undefined, refused: boolean): Exclude<StopReason, "error"> {
  if (refused) return "refused";
  return (finishReason && BY_FINISH[finishReason]) || "completed";
}
