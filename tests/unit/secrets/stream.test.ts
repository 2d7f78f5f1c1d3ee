import { describe, expect, it } from "vitest";
import { StreamRedactor } from "../../../server/secrets";

const KEY = "sk-proj-Zq8v3LmN5pR7tX9wB2dF4hJ6kA1cE0gY";

function feed(chunks: string[]): string {
  const redactor = new StreamRedactor();
  return chunks.map((chunk) => redactor.push(chunk)).join("") + redactor.flush();
}

describe("StreamRedactor", () => {
  it("redacts a key split across chunks", () => {
    const text = `key: ${KEY}\nnext\n`;
    for (let cut = 1; cut < text.length; cut++) {
      const out = feed([text.slice(0, cut), text.slice(cut)]);
      expect(out).not.toContain(KEY.slice(8));
      expect(out).toContain("next\n");
    }
  });

  it("drops a PEM private key whose lines arrive in separate chunks", () => {
    const out = feed([
      "before\n-----BEGIN RSA PRIVATE KEY-----\n",
      "MIIEsecretbody1\n",
      "MIIEsecretbody2\n-----END RSA",
      " PRIVATE KEY-----\nafter\n",
    ]);
    expect(out).toBe("before\n[REDACTED PRIVATE KEY]\nafter\n");
  });

  it("passes a very long line on without waiting for its end", () => {
    const redactor = new StreamRedactor();
    expect(redactor.push("x".repeat(10_000)).length).toBe(10_000);
  });

  it("keeps ordinary text and source code intact", () => {
    const code = "const token = getToken();\npassword = input()\n";
    expect(feed([code.slice(0, 7), code.slice(7)])).toBe(code);
  });
});
