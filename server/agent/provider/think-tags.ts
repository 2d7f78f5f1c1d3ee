const OPEN = "<think>";
const CLOSE = "</think>";

export type ContentPiece = { type: "text" | "reasoning"; delta: string };

/**
 * Reasoning inlined in `content` as `<think>…</think>` at the start of the answer (vLLM without a
 * reasoning parser, llama.cpp, Ollama, LM Studio, DeepSeek-R1 distills): what is inside the tags is
 * reasoning, what follows is the answer. Only a tag that opens the content counts, so an answer that
 * merely mentions `<think>` stays text. Tags split across chunks are held back until they are whole.
 */
export class ThinkTagSplitter {
  private state: "start" | "thinking" | "answer-start" | "answer" = "start";
  private held = "";
  /** True once a `<think>` block was read: the form the Settings page reports. */
  sawTags = false;

  feed(content: string): ContentPiece[] {
    this.held += content;
    const out: ContentPiece[] = [];
    for (;;) {
      if (this.state === "start") {
        const trimmed = this.held.trimStart();
        if (trimmed.startsWith(OPEN)) {
          this.state = "thinking";
          this.sawTags = true;
          this.held = trimmed.slice(OPEN.length);
          continue;
        }
        if (OPEN.startsWith(trimmed)) return out; // still could become the tag
        this.state = "answer";
        continue;
      }
      if (this.state === "thinking") {
        const end = this.held.indexOf(CLOSE);
        if (end === -1) {
          const keep = partialSuffix(this.held, CLOSE);
          push(out, "reasoning", this.held.slice(0, this.held.length - keep));
          this.held = this.held.slice(this.held.length - keep);
          return out;
        }
        push(out, "reasoning", this.held.slice(0, end));
        this.held = this.held.slice(end + CLOSE.length);
        this.state = "answer-start";
        continue;
      }
      if (this.state === "answer-start") {
        // The blank lines between the block and the answer are layout, not answer.
        this.held = this.held.trimStart();
        if (!this.held) return out;
        this.state = "answer";
        continue;
      }
      push(out, "text", this.held);
      this.held = "";
      return out;
    }
  }

  /** The end of the stream: whatever was held back is what it was heading to be. */
  end(): ContentPiece[] {
    const out: ContentPiece[] = [];
    push(out, this.state === "thinking" ? "reasoning" : "text", this.state === "answer-start" ? "" : this.held);
    this.held = "";
    return out;
  }
}

function push(out: ContentPiece[], type: ContentPiece["type"], delta: string): void {
  if (delta) out.push({ type, delta });
}

/** How many characters at the end of `text` could be the start of `tag`. */
function partialSuffix(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) if (tag.startsWith(text.slice(-n))) return n;
  return 0;
}
