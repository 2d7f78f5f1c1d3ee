import type { Browser, BrowserContext, Page } from "playwright-core";
import { errorMessage, WorldlineError } from "../errors";
import { MAX_PROMPT_IMAGE_BYTES } from "../protocol";
import { parsePreviewHost } from "./host-name";
import { CHROMIUM_ARGS } from "./chromium-flags";
import type { Previews } from "./service";

/** The page size the agent sees: a laptop's. */
export const BROWSER_VIEWPORT = { width: 1280, height: 800 };
/** A page that has not loaded by then is reported as not loading, not waited on. */
export const NAVIGATION_TIMEOUT_MS = 15_000;
/** Clicking or typing into an element that never appears. */
export const ACTION_TIMEOUT_MS = 5_000;
/** Console lines kept per session (the newest): enough for a page's errors, bounded for a chatty one. */
const MAX_CONSOLE_LINES = 200;
/** The longest side the model gets: larger pictures are scaled down to it. */
export const MAX_IMAGE_SIDE = 2048;
/** The transcript's copy of a screenshot: small enough for every tab's replay of the session. */
const PREVIEW_WIDTH = 640;
const PREVIEW_MAX_CHARS = 160_000;

export interface ConsoleLine {
  type: string;
  text: string;
}

interface SessionBrowser {
  context: BrowserContext;
  page: Page;
  console: ConsoleLine[];
}

export interface Screenshot {
  /** What the model gets: PNG (or JPEG when a PNG would be over the image limit), a `data:` URL. */
  dataUrl: string;
  width: number;
  height: number;
  /** A small JPEG `data:` URL for the transcript. */
  preview: string;
}

/**
 * The bridge's Chromium (playwright-core driving `CHROMIUM_PATH`, /usr/bin/chromium by default):
 * one browser per bridge, launched on first use, and one context per session (its own cookies and
 * storage), closed when the session idles. A session's context carries the preview cookies of
 * that session's ports, so its own previews open without the IDE's sign-in.
 */
export class BrowserSessions {
  private browser: Promise<Browser> | undefined;
  private readonly sessions = new Map<string, Promise<SessionBrowser>>();
  private previews: Previews | undefined;

  constructor(private readonly executablePath = process.env.CHROMIUM_PATH || "/usr/bin/chromium") {}

  /** The bridge's previews, known once it listens (the preview hosts carry its port). */
  usePreviews(previews: Previews): void {
    this.previews = previews;
  }

  /** Whether a URL is one of this session's previews on this bridge. */
  isSessionPreview(sessionId: string, url: URL): boolean {
    if (!this.previews) return false;
    const target = parsePreviewHost(url.host, this.previews.bridgePort);
    return typeof target === "object" && target.sessionId === sessionId;
  }

  /** The session's page (opened on first use). */
  async page(sessionId: string): Promise<Page> {
    return (await this.session(sessionId)).page;
  }

  /** Goes to a URL; a page that does not load in time is a clear error. */
  async navigate(sessionId: string, url: string): Promise<{ url: string; title: string; status: number | null }> {
    const target = new URL(url);
    if (target.protocol !== "http:" && target.protocol !== "https:")
      throw new WorldlineError("browser:invalid", `Only http and https pages can be opened, not ${target.protocol}`);
    const session = await this.session(sessionId);
    await this.grantPreview(sessionId, session.context, target);
    try {
      const response = await session.page.goto(url, { timeout: NAVIGATION_TIMEOUT_MS, waitUntil: "load" });
      return { url: session.page.url(), title: await session.page.title(), status: response?.status() ?? null };
    } catch (error) {
      if (/Timeout/i.test(errorMessage(error)))
        throw new WorldlineError(
          "browser:timeout",
          `${url} did not finish loading within ${NAVIGATION_TIMEOUT_MS / 1000}s.`,
        );
      throw new WorldlineError("browser:unreachable", `Could not open ${url}: ${firstLine(errorMessage(error))}`);
    }
  }

  /** The visible page, scaled to fit the model's image limit, plus a small copy for the transcript. */
  async screenshot(sessionId: string): Promise<Screenshot> {
    const { context, page } = await this.session(sessionId);
    const cdp = await context.newCDPSession(page);
    try {
      const size = page.viewportSize() ?? BROWSER_VIEWPORT;
      let scale = Math.min(1, MAX_IMAGE_SIDE / Math.max(size.width, size.height));
      const capture = async (format: "png" | "jpeg", at: number, quality?: number) => {
        const clip = { x: 0, y: 0, width: size.width, height: size.height, scale: at };
        const shot = (await cdp.send("Page.captureScreenshot", { format, quality, clip })) as { data: string };
        return shot.data;
      };
      let format: "png" | "jpeg" = "png";
      let data = await capture("png", scale);
      while (base64Size(data) > MAX_PROMPT_IMAGE_BYTES) {
        format = "jpeg";
        data = await capture("jpeg", scale, 80);
        if (base64Size(data) > MAX_PROMPT_IMAGE_BYTES) scale *= 0.7;
        else break;
      }
      let previewQuality = 60;
      let preview = await capture("jpeg", PREVIEW_WIDTH / size.width, previewQuality);
      while (preview.length > PREVIEW_MAX_CHARS && previewQuality > 20) {
        previewQuality -= 20;
        preview = await capture("jpeg", PREVIEW_WIDTH / size.width, previewQuality);
      }
      return {
        dataUrl: `data:image/${format};base64,${data}`,
        width: Math.round(size.width * scale),
        height: Math.round(size.height * scale),
        preview: `data:image/jpeg;base64,${preview}`,
      };
    } finally {
      await cdp.detach().catch(() => undefined); // the page closed meanwhile: nothing to detach
    }
  }

  /** The console lines and page errors seen since the session's page opened (the newest). */
  async consoleLines(sessionId: string): Promise<ConsoleLine[]> {
    return [...(await this.session(sessionId)).console];
  }

  /** A PNG of one element of a page (the Preview panel's "Pick element"), at the panel's width. */
  async captureElement(
    sessionId: string,
    input: { url: string; selector: string; width: number; height: number },
  ): Promise<string> {
    const { context } = await this.session(sessionId);
    await this.grantPreview(sessionId, context, new URL(input.url));
    const page = await context.newPage();
    try {
      await page.setViewportSize({ width: input.width, height: input.height });
      await page.goto(input.url, { timeout: NAVIGATION_TIMEOUT_MS, waitUntil: "load" });
      const shot = await page.locator(input.selector).first().screenshot({ timeout: ACTION_TIMEOUT_MS });
      return shot.toString("base64");
    } finally {
      await page.close().catch(() => undefined); // already closed with its context: nothing left
    }
  }

  async closeSession(sessionId: string): Promise<void> {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    this.sessions.delete(sessionId);
    await (await session.catch(() => undefined))?.context.close().catch(() => undefined); // a browser that died took it along
  }

  async close(): Promise<void> {
    await Promise.all([...this.sessions.keys()].map((id) => this.closeSession(id)));
    const browser = this.browser;
    this.browser = undefined;
    await (await browser?.catch(() => undefined))?.close().catch(() => undefined); // never launched, or already gone
  }

  private session(sessionId: string): Promise<SessionBrowser> {
    let session = this.sessions.get(sessionId);
    if (!session) {
      session = this.open();
      this.sessions.set(sessionId, session);
      session.catch(() => this.sessions.delete(sessionId)); // the next call tries again
    }
    return session;
  }

  private async open(): Promise<SessionBrowser> {
    const browser = await this.launch();
    const context = await browser.newContext({ viewport: BROWSER_VIEWPORT });
    const page = await context.newPage();
    const lines: ConsoleLine[] = [];
    const keep = (line: ConsoleLine) => {
      lines.push(line);
      if (lines.length > MAX_CONSOLE_LINES) lines.shift();
    };
    page.on("console", (message) => keep({ type: message.type(), text: message.text() }));
    page.on("pageerror", (error) => keep({ type: "pageerror", text: error.message }));
    return { context, page, console: lines };
  }

  private launch(): Promise<Browser> {
    if (!this.browser) {
      // playwright-core (~450 ms of module loading) only once the agent first uses the browser: print
      // mode and every turn without the `browser` tool never load it.
      const launching = import("playwright-core").then(({ chromium }) =>
        chromium.launch({ executablePath: this.executablePath, args: CHROMIUM_ARGS, headless: true }),
      );
      launching.then(
        (browser) => browser.on("disconnected", () => this.forgetBrowser(launching)),
        () => this.forgetBrowser(launching),
      );
      this.browser = launching;
    }
    return this.browser.catch((error: unknown) => {
      throw new WorldlineError(
        "browser:unavailable",
        `Chromium could not be started from ${this.executablePath} (set CHROMIUM_PATH): ${firstLine(errorMessage(error))}`,
      );
    });
  }

  private forgetBrowser(launching: Promise<Browser>): void {
    if (this.browser !== launching) return;
    this.browser = undefined;
    this.sessions.clear();
  }

  /** This session's preview cookie for the URL's host, so its own previews need no sign-in. */
  private async grantPreview(sessionId: string, context: BrowserContext, url: URL): Promise<void> {
    if (!this.previews || !this.isSessionPreview(sessionId, url)) return;
    const target = parsePreviewHost(url.host, this.previews.bridgePort);
    if (typeof target !== "object") return;
    const cookie = this.previews.grants.cookieFor(target);
    await context.addCookies([{ ...cookie, url: url.origin, httpOnly: true, sameSite: "Lax" }]);
  }
}

function base64Size(data: string): number {
  return Math.floor((data.length * 3) / 4);
}

function firstLine(text: string): string {
  return text.split("\n")[0];
}
