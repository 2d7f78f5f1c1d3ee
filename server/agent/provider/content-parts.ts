/**
 * `delta.content` as an array of parts (Mistral's reasoning models): `{type:"text",text}` is answer
 * text, `{type:"thinking",thinking:[{type:"text",text}]}` is reasoning. Other part types (references,
 * images) carry nothing to show as text and are skipped.
 */
export function readContentParts(parts: readonly { type: string; [key: string]: unknown }[]): {
  text: string;
  reasoning: string;
} {
  let text = "";
  let reasoning = "";
  for (const part of parts) {
    if (part.type === "text" && typeof part.text === "string") text += part.text;
    if (part.type === "thinking") reasoning += thinkingText(part.thinking);
  }
  return { text, reasoning };
}

function thinkingText(thinking: unknown): string {
  if (typeof thinking === "string") return thinking;
  if (!Array.isArray(thinking)) return "";
  return thinking
    .map((piece: unknown) =>
      typeof piece === "object" && piece !== null && "text" in piece && typeof piece.text === "string"
        ? piece.text
        : "",
    )
    .join("");
}
