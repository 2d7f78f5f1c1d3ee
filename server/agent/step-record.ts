import type { HistoryRecord } from "./context";
import type { StepResult } from "./stream-step";
import type { CallResult } from "./tool-runner";
import type { TurnRun } from "./turn-run";

/**
 * The assistant message and all its results are appended together, in call order: a cancel can
 * never leave a tool call without a result in history.
 */
export async function recordStep(run: TurnRun, result: StepResult, results: readonly CallResult[]): Promise<void> {
  const { context, emit } = run;
  const usage: HistoryRecord[] = result.usage
    ? [
        {
          kind: "usage",
          tokens: result.usage.inputTokens + result.usage.outputTokens,
          input: result.usage.inputTokens,
          cached: result.usage.cachedInputTokens,
          output: result.usage.outputTokens,
        },
      ]
    : [];
  await context.append({ kind: "message", message: result.message }, ...usage, ...toolMessages(results));
  emit.event({
    type: "context.usage",
    payload: {
      tokens: context.estimatedTokens(),
      window: run.contextWindow,
      inputTokens: result.usage?.inputTokens,
      outputTokens: result.usage?.outputTokens,
      cachedInputTokens: result.usage?.cachedInputTokens,
    },
  });
}

export function toolMessages(results: readonly CallResult[]): HistoryRecord[] {
  const records: HistoryRecord[] = results.map(({ call, result }) => ({
    kind: "message" as const,
    message: { role: "tool" as const, tool_call_id: call.id, content: result.output },
  }));
  // A tool message carries text only (Chat Completions): images a tool returned (the browser's
  // screenshots) follow the results as one user message, as a pasted image would.
  const withImages = results.filter(({ result }) => result.images?.length);
  if (withImages.length === 0) return records;
  const text = `Images returned by ${withImages.map(({ call }) => `tool call ${call.id}`).join(", ")}:`;
  const parts = withImages.flatMap(({ result }) =>
    (result.images ?? []).map((url) => ({ type: "image_url" as const, image_url: { url } })),
  );
  records.push({ kind: "message", message: { role: "user", content: [{ type: "text", text }, ...parts] } });
  return records;
}
