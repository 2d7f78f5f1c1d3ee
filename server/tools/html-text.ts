import { convert, type FormatCallback } from "html-to-text";

/**
 * Readable text from HTML for the model (fetch_url), by a maintained converter (html-to-text)
 * rather than regexes: scripts, styles and markup dropped, paragraphs and list bullets kept,
 * links as `[label](href)` so the model can follow them, the page title first.
 */

/** `[label](href)`; an in-page or script link is just its label. */
const markdownLink: FormatCallback = (elem, walk, builder) => {
  const href = String(elem.attribs?.href ?? "");
  const plain = !href || href.startsWith("#") || href.startsWith("javascript:");
  if (plain) return walk(elem.children, builder);
  builder.addInline("[", { noWordTransform: true });
  walk(elem.children, builder);
  builder.addInline(`](${href})`, { noWordTransform: true });
};

const OPTIONS = {
  wordwrap: false as const,
  formatters: { markdownLink },
  selectors: [
    { selector: "a", format: "markdownLink" },
    { selector: "img", format: "skip" },
    { selector: "head", format: "skip" },
    { selector: "nav", format: "skip" },
    { selector: "h1", options: { uppercase: false } },
    { selector: "h2", options: { uppercase: false } },
    { selector: "h3", options: { uppercase: false } },
    { selector: "h4", options: { uppercase: false } },
    { selector: "h5", options: { uppercase: false } },
    { selector: "h6", options: { uppercase: false } },
    { selector: "table", format: "dataTable" },
    { selector: "ul", options: { itemPrefix: "- " } },
  ],
};

export function htmlToText(html: string): string {
  const title = convert(/<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1] ?? "", { wordwrap: false }).trim();
  const text = convert(html, OPTIONS)
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  return title && !text.startsWith(title) ? `${title}\n\n${text}` : text;
}
