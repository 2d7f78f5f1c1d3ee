import type { ResponseForms } from "@/server/protocol";

const REASONING_FORM: Record<ResponseForms["reasoning"], string> = {
  reasoning_content: "reasoning_content field",
  reasoning: "reasoning field",
  content_parts: "thinking content parts",
  think_tags: "<think> tags in the answer",
  none: "none sent",
};

const CACHE_FORM: Record<ResponseForms["cache"], string> = {
  cached_tokens: "prompt_tokens_details.cached_tokens",
  usage_cached_tokens: "usage.cached_tokens",
  prompt_cache_hit_tokens: "prompt_cache_hit_tokens",
  cache_read_input_tokens: "cache_read_input_tokens",
  none: "not reported",
};

/**
 * What a provider's last response on this bridge looked like, so a user sees at a glance that their
 * server's reasoning is read. `testId` tells the providers list's line from the edit form's.
 */
export function DetectedForms({ forms, testId = "provider-detected" }: { forms: ResponseForms; testId?: string }) {
  return (
    <p className="text-xs text-muted" data-testid={testId}>
      Last response ({new Date(forms.at).toLocaleString()}): reasoning read from{" "}
      <span className="font-mono">{REASONING_FORM[forms.reasoning]}</span>; cached input from{" "}
      <span className="font-mono">{CACHE_FORM[forms.cache]}</span>.
    </p>
  );
}
