// Real open models' chat templates, rendered offline, and the prompt-cache reuse figure.
// What a vLLM / llama.cpp `--jinja` / LM Studio server does with a Chat Completions request: it renders the
// messages and tools through the model's Jinja template into one prompt string, and its prefix cache can only
// reuse the part of the previous prompt that the new one starts with.
import { readFileSync } from "node:fs";
import { Template } from "@huggingface/jinja";

export const TEMPLATE_MODELS = ["qwen3", "llama3_1", "deepseek_v3", "gemma3"] as const;
export type TemplateModel = (typeof TEMPLATE_MODELS)[number];

// Each model's `chat_template`, vendored with its source and license: tests/fixtures/chat-templates/README.md.
const TEMPLATES_DIR = new URL("../fixtures/chat-templates/", import.meta.url);

const templates = new Map<TemplateModel, Template>();

function template(model: TemplateModel): Template {
  let found = templates.get(model);
  if (!found) {
    found = new Template(readFileSync(new URL(`${model}.jinja`, TEMPLATES_DIR), "utf8"));
    templates.set(model, found);
  }
  return found;
}

/** A request body as the fake LLM recorded it (OpenAI Chat Completions). */
export interface RecordedBody {
  messages: WireMessage[];
  tools?: unknown[];
}

interface WireMessage {
  role: string;
  content?: unknown;
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
  reasoning_content?: string;
}

/**
 * The template's inputs for a request, the way serving stacks convert them: tool-call `arguments` parsed
 * to objects, a `null` assistant content as "", content parts joined to their text.
 */
export function templateInputs(body: RecordedBody): { messages: Record<string, unknown>[]; tools?: unknown[] } {
  const messages = body.messages.map((message) => {
    const converted: Record<string, unknown> = { ...message, content: textOf(message.content) };
    if (message.tool_calls) {
      converted.tool_calls = message.tool_calls.map((call) => ({
        ...call,
        function: { name: call.function.name, arguments: parseArguments(call.function.arguments) },
      }));
    }
    return converted;
  });
  return { messages, tools: body.tools?.length ? body.tools : undefined };
}

/** The prompt a server would feed the model for this request (with the generation prompt). */
export function renderPrompt(model: TemplateModel, body: RecordedBody): string {
  const { messages, tools } = templateInputs(body);
  return template(model).render({
    messages,
    tools,
    add_generation_prompt: true,
    bos_token: "",
    eos_token: "",
  });
}

/** The same prompt without the generation prompt at its end: what a next request can reuse. */
export function renderWithoutGenerationPrompt(model: TemplateModel, body: RecordedBody): string {
  const { messages, tools } = templateInputs(body);
  return template(model).render({ messages, tools, add_generation_prompt: false, bos_token: "", eos_token: "" });
}

export interface ReusePair {
  /** Index of the request in the chain that reuses the one before it. */
  index: number;
  previousLength: number;
  reused: number;
}

export interface ReuseFigure {
  /** Sum of reused characters over sum of previous prompt lengths (1 = every request extends the previous). */
  reuse: number;
  pairs: ReusePair[];
  /** Pairs where the next prompt does not start with the whole previous one. */
  broken: ReusePair[];
}

/**
 * For each request after the first: the share of the previous rendered prompt (without its generation prompt)
 * that is a prefix of the next rendered prompt, summed over the chain.
 */
export function promptCacheReuse(bodies: readonly RecordedBody[], model: TemplateModel = "qwen3"): ReuseFigure {
  const pairs: ReusePair[] = [];
  let previous: string | undefined;
  for (const [index, body] of bodies.entries()) {
    const full = renderPrompt(model, body);
    if (previous !== undefined) {
      pairs.push({ index, previousLength: previous.length, reused: commonPrefixLength(previous, full) });
    }
    previous = renderWithoutGenerationPrompt(model, body);
  }
  const total = pairs.reduce((sum, pair) => sum + pair.previousLength, 0);
  const reused = pairs.reduce((sum, pair) => sum + pair.reused, 0);
  return {
    reuse: total === 0 ? 1 : reused / total,
    pairs,
    broken: pairs.filter((pair) => pair.reused < pair.previousLength),
  };
}

export function commonPrefixLength(a: string, b: string): number {
  const max = Math.min(a.length, b.length);
  let i = 0;
  while (i < max && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

function textOf(content: unknown): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part: { type?: string; text?: string }) => (part.type === "text" ? (part.text ?? "") : ""))
      .join("");
  }
  return String(content);
}

function parseArguments(raw: string): unknown {
  try {
    return JSON.parse(raw || "{}");
  } catch {
    return raw;
  }
}
