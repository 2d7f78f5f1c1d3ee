import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { IdePage } from "./pages/ide-page";
import { bridgeApi, e2e, expect, freshWorkspace, login, scriptLlm, test } from "./fixtures";

/**
 * Makes docs/screenshot.png for the README: a realistic session at 1440×900 in the dark
 * theme — a small git project, the agent reading a file, editing it (diff open in the
 * editor), answering in Markdown, and the tests run in a terminal. Opt-in, because it
 * writes into the repository:
 *   WORLDLINE_SCREENSHOT=1 npm run test:e2e -- screenshot.spec.ts
 */
test.skip(!process.env.WORLDLINE_SCREENSHOT, "set WORLDLINE_SCREENSHOT=1 to regenerate docs/screenshot.png");

const FILES: Record<string, string> = {
  "package.json": `{\n  "name": "tiny-blog",\n  "version": "1.0.0",\n  "type": "module",\n  "scripts": { "test": "node --test" }\n}\n`,
  "README.md": "# tiny-blog\n\nA very small blog engine: Markdown posts, slugs, an RSS feed.\n",
  ".gitignore": "node_modules/\n*.log\n",
  "src/util/slugify.js": `/** URL-safe slug of a post title. */
export function slugify(title) {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}
`,
  "src/util/dates.js": `export const isoDate = (date) => date.toISOString().slice(0, 10);\n`,
  "src/posts.js": `import { slugify } from "./util/slugify.js";
import { isoDate } from "./util/dates.js";

export function toPost({ title, body, date }) {
  return { slug: slugify(title), title, body, date: isoDate(date) };
}
`,
  "src/feed.js": `export function rss(posts) {\n  return posts.map((p) => \`<item><title>\${p.title}</title></item>\`).join("\\n");\n}\n`,
  "test/slugify.test.js": `import assert from "node:assert/strict";
import { test } from "node:test";
import { slugify } from "../src/util/slugify.js";

test("lowercases and joins words", () => {
  assert.equal(slugify("Hello World"), "hello-world");
});

test("keeps accented letters readable", () => {
  assert.equal(slugify("Crème brûlée, twice!"), "creme-brulee-twice");
});

test("trims dashes", () => {
  assert.equal(slugify("  -- Tips & tricks --  "), "tips-tricks");
});
`,
};

const OLD_BODY = `  return title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")`;
const NEW_BODY = `  return title
    .normalize("NFKD") // "è" → "e" + a combining accent
    .replace(/[\\u0300-\\u036f]/g, "") // drop the accents, keep the letters
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")`;

const ANSWER = `### Fixed: accented titles lost their letters

\`slugify\` replaced every non-ASCII character with a dash, so **"Crème brûlée"** became \`cr-me-br-l-e\`.

- It now decomposes the title with \`normalize("NFKD")\` and drops the combining accents, so \`è\` → \`e\`.
- Everything else is unchanged: lowercase, runs of other characters become one \`-\`, no dashes at the ends.

\`\`\`js
slugify("Crème brûlée, twice!"); // → "creme-brulee-twice"
\`\`\`

The failing test in \`test/slugify.test.js\` passes now — run \`node --test\` to check.`;

test("docs/screenshot.png", async ({ page }) => {
  test.setTimeout(120_000);
  // A short, stable path: it shows in the header and the shell prompt.
  const workspace = path.join(path.dirname(await freshWorkspace("shot")), "tiny-blog");
  await fs.rm(workspace, { recursive: true, force: true });
  for (const [file, text] of Object.entries(FILES)) {
    await fs.mkdir(path.dirname(path.join(workspace, file)), { recursive: true });
    await fs.writeFile(path.join(workspace, file), text);
  }
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=Worldline", "-c", "user.email=dev@example.com", ...args], {
      cwd: workspace,
      stdio: "ignore",
    });
  git("init", "-q", "-b", "main");
  git("add", ".");
  git("commit", "-q", "-m", "tiny blog");

  const { layout: before } = await bridgeApi<{ layout: unknown }>("/api/v1/settings/layout");
  await bridgeApi(
    "/api/v1/settings/layout",
    { treeWidth: 230, agentWidth: 560, bottomHeight: 330, treeOpen: true, bottomOpen: true, theme: "dark" },
    "PUT",
  );
  try {
    const session = await bridgeApi<{ id: string }>("/api/v1/sessions", {
      workspace,
      title: "Accented titles in slugs",
    });
    await bridgeApi(`/api/v1/sessions/${session.id}`, { yolo: true }, "PATCH");

    await page.setViewportSize({ width: 1440, height: 900 });
    await login(page);
    const ide = new IdePage(page);
    await ide.goto(e2e.baseUrl, session.id);

    await scriptLlm(
      {
        reasoning: "The slug regex only keeps a-z0-9, so accented letters become dashes. Let me read the helper first.",
        toolCalls: [{ name: "read_file", arguments: { path: "src/util/slugify.js" } }],
        usage: { prompt_tokens: 3_850, completion_tokens: 60 },
      },
      {
        reasoning: "Normalising to NFKD splits è into e + U+0300; stripping U+0300–U+036F keeps the base letter.",
        toolCalls: [
          {
            name: "str_replace",
            arguments: { path: "src/util/slugify.js", edits: [{ old_text: OLD_BODY, new_text: NEW_BODY }] },
          },
        ],
        usage: { prompt_tokens: 4_420, completion_tokens: 140 },
      },
      { text: ANSWER, chunkSize: 24, usage: { prompt_tokens: 4_910, completion_tokens: 210 } },
    );
    await ide.send(
      "Titles like “Crème brûlée” turn into broken slugs — fix slugify so the test in test/slugify.test.js passes.",
    );
    const edit = ide.toolCards().filter({ hasText: "str_replace" });
    await expect(edit).toHaveAttribute("data-state", "completed");
    await expect(page.getByTestId("message-text").last()).toContainText("run node --test to check");

    // The file, then the agent's diff, in the editor area.
    if ((await ide.treeItem("test").getAttribute("aria-expanded")) !== "true") await ide.treeItem("test").click();
    await ide.openFile("src/util/slugify.js");
    await edit.getByTestId("open-diff").click();
    await expect(page.getByTestId("diff-tab")).toContainText("normalize");

    // The tests, run by hand in the session's terminal.
    const terminal = await ide.openTerminal();
    const id = (await terminal.getAttribute("data-terminal-id"))!;
    const text = () => page.evaluate((tid) => window.worldlineTerminalText?.(tid) ?? "", id);
    await expect.poll(async () => (await text()).trim().length).toBeGreaterThan(0);
    await terminal.locator(".xterm").click();
    await page.keyboard.type("PS1='\\[\\e[36m\\]tiny-blog\\[\\e[0m\\] $ '; clear\n");
    await expect.poll(text).toMatch(/^tiny-blog \$/);
    await page.keyboard.type("git status --short && node --test --test-reporter=spec\n");
    await expect.poll(text, { timeout: 30_000 }).toContain("duration_ms");

    // Calm the page: no hover or focus rings, the transcript at its end.
    await page.mouse.move(1439, 899);
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    // Transitions (focus rings, the hover fade) end within this; the picture is of the page at rest.
    await page.waitForTimeout(400);
    await page.screenshot({ path: path.resolve("docs/screenshot.png") });
  } finally {
    await bridgeApi(
      "/api/v1/settings/layout",
      before ?? {
        treeWidth: 240,
        agentWidth: 460,
        bottomHeight: 220,
        treeOpen: true,
        bottomOpen: false,
        theme: "dark",
      },
      "PUT",
    );
  }
});
