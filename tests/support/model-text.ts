/**
 * A message's text without what Worldline adds for the model: checkpoint markers (which ride inside user
 * messages and tool results when D-Mail is on) and a turn's `<context>` block. Tests compare the rest.
 */
export function plainText(text: string): string {
  return text
    .replace(/<system>CHECKPOINT \d+<\/system>\n\n/g, "")
    .replace(/\n\n<system>CHECKPOINT \d+<\/system>/g, "")
    .replace(/\n\n<context>[\s\S]*?<\/context>/g, "")
    .replace(/<system>CHECKPOINT \d+<\/system>/g, "");
}
