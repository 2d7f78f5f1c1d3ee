/**
 * Prompt cache reuse: the scripted session of tests/support/scripted-session.ts (11+ turns with
 * tools, parallel tools, a stored memory, an AGENTS.md that is edited, a new top-level file, steering and a
 * queued prompt) runs on a real bridge against the fake LLM; every request of the conversation is rendered
 * through Qwen3's chat template (what vLLM or llama.cpp would cache), and `prompt_cache_reuse` is the share of
 * each previous prompt that the next one starts with, summed over the session (1 = append-only). Run alone
 * with `npx tsx bench/prompt-cache.ts`; the last line printed is one JSON object.
 */
import { promptCacheReuse } from "../tests/support/chat-templates.ts";
import { runScriptedSession } from "../tests/support/scripted-session.ts";
import { isMain, printJsonLine } from "./lib/cli.ts";

export interface PromptCacheBenchResult {
  prompt_cache_reuse: number;
  requests: number;
  /** Requests whose prompt does not start with the whole previous one. */
  prefix_breaks: number;
  /** Sum of the previous prompts' rendered lengths, in characters. */
  rendered_chars: number;
}

export async function run(): Promise<PromptCacheBenchResult> {
  const recording = await runScriptedSession();
  const figure = promptCacheReuse(recording.chain, "qwen3");
  return {
    prompt_cache_reuse: Math.round(figure.reuse * 10_000) / 10_000,
    requests: recording.chain.length,
    prefix_breaks: figure.broken.length,
    rendered_chars: figure.pairs.reduce((sum, pair) => sum + pair.previousLength, 0),
  };
}

if (isMain(import.meta.url)) {
  const result = await run();
  console.log(
    `Prompt cache: ${result.requests} requests, ${result.prefix_breaks} prefix breaks, reuse ${result.prompt_cache_reuse}`,
  );
  printJsonLine(result);
}
