import { isIP } from "node:net";
import * as z from "zod";
import type { BrowserSessions } from "../preview";
import { defineTool, type Tool } from "./define";
import type { ApprovalNeed } from "./types";

/** Characters of page text `read` returns; pages are long and mostly navigation. */
export const BROWSER_READ_MAX_CHARS = 20_000;
/** Console lines `console` returns (the newest). */
const CONSOLE_LINES_SHOWN = 100;

const BrowserParameters = z
  .object({
    action: z
      .enum(["navigate", "screenshot", "click", "type", "console", "read"])
      .describe(
        "navigate: open `url`. screenshot: an image of the page (opens `url` first when given). click: click the element `selector`. type: fill `text` into the input `selector`. console: the page's console logs and errors. read: the page's text (or the text of `selector`).",
      ),
    url: z
      .string()
      .url()
      .optional()
      .describe(
        "For navigate and screenshot: an http(s) URL. The session's previews (GET its ports) and loopback addresses such as http://127.0.0.1:5173/ open without approval; other hosts ask the user.",
      ),
    selector: z
      .string()
      .min(1)
      .max(1000)
      .optional()
      .describe(
        "For click, type and read: a CSS selector (Playwright's selector syntax, e.g. `text=Save`, also works).",
      ),
    text: z.string().max(10_000).optional().describe("For type: the text to enter."),
  })
  .strict();
type BrowserArgs = z.infer<typeof BrowserParameters>;

/**
 * The agent's browser: a real Chromium page per session, to look at what it built.
 * Opening a page of the session's own previews or of a loopback address needs no approval; any
 * other host asks with its URL.
 */
export function createBrowserTool(browsers: BrowserSessions): Tool {
  return defineTool({
    name: "browser",
    description:
      "Drive a real Chromium browser to check web pages you build: open a dev server's page (http://127.0.0.1:<port>/ or the session's preview address), take a screenshot (you see the image), click, type, read the text, and read the console's errors. One page per session; it keeps its state between calls.",
    parameters: BrowserParameters,
    // Navigation and actions bound their own time (NAVIGATION_TIMEOUT_MS, ACTION_TIMEOUT_MS).
    timeoutMs: 60_000,
    needsApproval: (args, ctx) => approval(args, browsers.isSessionPreview.bind(browsers, ctx.sessionId)),
    async execute(args, ctx) {
      const needs = (field: "url" | "selector" | "text") => `The ${args.action} action needs \`${field}\`.`;
      switch (args.action) {
        case "navigate": {
          if (!args.url) return { isError: true, output: needs("url") };
          const page = await browsers.navigate(ctx.sessionId, args.url);
          return `Opened ${page.url} (status ${page.status ?? "unknown"}): "${page.title}".`;
        }
        case "screenshot": {
          if (args.url) await browsers.navigate(ctx.sessionId, args.url);
          const shot = await browsers.screenshot(ctx.sessionId);
          const url = (await browsers.page(ctx.sessionId)).url();
          return {
            isError: false,
            output: `Screenshot of ${url} (${shot.width}×${shot.height}); the image follows.`,
            images: [shot.dataUrl],
            display: { screenshot: shot.preview, url },
          };
        }
        case "click": {
          if (!args.selector) return { isError: true, output: needs("selector") };
          const page = await browsers.page(ctx.sessionId);
          await page.click(args.selector, { timeout: 5_000 });
          await page.waitForLoadState("load", { timeout: 5_000 }).catch(() => undefined); // a click that loads nothing is fine
          return `Clicked ${args.selector}; the page is ${page.url()}.`;
        }
        case "type": {
          if (!args.selector) return { isError: true, output: needs("selector") };
          if (args.text === undefined) return { isError: true, output: needs("text") };
          const page = await browsers.page(ctx.sessionId);
          await page.fill(args.selector, args.text, { timeout: 5_000 });
          return `Typed ${args.text.length} characters into ${args.selector}.`;
        }
        case "console": {
          const lines = (await browsers.consoleLines(ctx.sessionId)).slice(-CONSOLE_LINES_SHOWN);
          if (lines.length === 0) return "The console is empty.";
          return lines.map((line) => `[${line.type}] ${line.text}`).join("\n");
        }
        case "read": {
          const page = await browsers.page(ctx.sessionId);
          const text = await page
            .locator(args.selector ?? "body")
            .first()
            .innerText({ timeout: 5_000 });
          const cut = text.length > BROWSER_READ_MAX_CHARS;
          return `${page.url()}\n\n${text.slice(0, BROWSER_READ_MAX_CHARS)}${cut ? `\n[text cut: ${text.length - BROWSER_READ_MAX_CHARS} more characters]` : ""}`;
        }
      }
    },
  });
}

/** Free for the session's previews and loopback; any other host asks with the URL. */
function approval(args: BrowserArgs, ownPreview: (url: URL) => boolean): ApprovalNeed {
  const url = args.action === "navigate" || args.action === "screenshot" ? args.url : undefined;
  if (!url) {
    return {
      level: "none",
      subject: `browser ${args.action}`,
      scope: "browser",
      description: `Browser: ${args.action}`,
      risk: "none",
    };
  }
  const parsed = new URL(url);
  if (
    (parsed.protocol === "http:" || parsed.protocol === "https:") &&
    (ownPreview(parsed) || isLoopback(parsed.hostname))
  ) {
    return { level: "none", subject: url, scope: "browser", description: `Open ${url} in the browser`, risk: "none" };
  }
  return {
    level: "ask",
    subject: url,
    scope: `${parsed.origin}/*`,
    description: `Open ${url} in the browser`,
    risk: "low",
    actionType: "network",
  };
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost") return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  return host === "::1";
}
