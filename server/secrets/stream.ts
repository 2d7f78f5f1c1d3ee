import { redactForOutput } from "./redact";

/** A line longer than this is passed on without waiting for its end (a progress bar, minified output). */
const MAX_HELD_CHARS = 8 * 1024;

const PEM_BEGIN = /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/;
const PEM_END = /-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/;

/**
 * Redacts streamed output (tool progress) whose chunks may split a secret: text is
 * passed on by whole lines, and the lines of a PEM private key are dropped until its
 * END line, however many chunks it spans.
 */
export class StreamRedactor {
  private held = "";
  private inPrivateKey = false;

  constructor(private readonly redact: (text: string) => string = redactForOutput) {}

  /** Takes a chunk; returns what can be shown now (maybe ""). */
  push(chunk: string): string {
    this.held += chunk;
    const cut = this.held.length > MAX_HELD_CHARS ? this.held.length : this.held.lastIndexOf("\n") + 1;
    if (cut === 0) return "";
    const ready = this.held.slice(0, cut);
    this.held = this.held.slice(cut);
    return this.lines(ready);
  }

  /** The rest, at the end of the stream. */
  flush(): string {
    const rest = this.held;
    this.held = "";
    return rest ? this.lines(rest) : "";
  }

  private lines(text: string): string {
    let out = "";
    for (const line of text.split(/(?<=\n)/)) {
      if (this.inPrivateKey) {
        if (PEM_END.test(line)) {
          this.inPrivateKey = false;
          out += "[REDACTED PRIVATE KEY]\n";
        }
        continue;
      }
      if (PEM_BEGIN.test(line) && !PEM_END.test(line)) {
        this.inPrivateKey = true;
        continue;
      }
      out += this.redact(line);
    }
    return out;
  }
}
