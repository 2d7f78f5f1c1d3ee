import { SessionPage } from "./pages/session-page";
import { bridgeApi, e2e, expect, freshWorkspace, login, test } from "./fixtures";

/** A thumb's target (WCAG 2.5.5, Apple's HIG): every control of the phone header is at least this square. */
const MIN_TARGET_PX = 44;
const PHONE = { width: 390, height: 844 };

test("the phone header fits 390 px: no overlap, nothing cut, 44 px targets, and it looks as recorded", async ({
  browser,
}) => {
  const { id } = await bridgeApi<{ id: string }>("/api/v1/sessions", {
    workspace: await freshWorkspace("phone-header"),
    yolo: true,
    title: "Fix the flaky login test",
  });
  const context = await browser.newContext({ viewport: PHONE, hasTouch: true, isMobile: true });
  const page = await context.newPage();
  await login(page);
  // The recorded look is the dark theme's.
  await page.evaluate(() => localStorage.setItem("worldline.layout", JSON.stringify({ theme: "dark" })));
  await new SessionPage(page).goto(e2e.baseUrl, id);
  await expect(page.getByTestId("presence-viewers")).toHaveAttribute("data-count", "1");
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");

  const controls = page.locator(
    '[data-testid="session-header"] button, [data-testid="pane-tabs"] button, nav[aria-label="Main"] a:visible, nav[aria-label="Main"] button',
  );
  const boxes = await controls.evaluateAll((elements) =>
    elements.map((element) => {
      const box = element.getBoundingClientRect();
      return {
        name: element.getAttribute("data-testid") ?? element.textContent?.trim() ?? "?",
        left: box.left,
        right: box.right,
        top: box.top,
        bottom: box.bottom,
        cut: element.scrollWidth > element.clientWidth + 1,
      };
    }),
  );
  expect(boxes.length).toBeGreaterThanOrEqual(12);
  for (const box of boxes) {
    expect.soft(box.right - box.left, `${box.name} width`).toBeGreaterThanOrEqual(MIN_TARGET_PX);
    expect.soft(box.bottom - box.top, `${box.name} height`).toBeGreaterThanOrEqual(MIN_TARGET_PX);
    expect.soft(box.left, `${box.name} starts on screen`).toBeGreaterThanOrEqual(0);
    expect.soft(box.right, `${box.name} ends on screen`).toBeLessThanOrEqual(PHONE.width);
    // The session title is the one control allowed to shorten a long title with an ellipsis.
    if (box.name !== "session-title") expect.soft(box.cut, `${box.name} is cut`).toBe(false);
  }
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, b] = [boxes[i], boxes[j]];
      const overlap =
        a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
      expect.soft(overlap, `${a.name} overlaps ${b.name}`).toBe(false);
    }

  const header = page.locator("body > nav, [data-testid='session-header'], [data-testid='pane-tabs']");
  await expect(header).toHaveCount(3);
  await expect(page).toHaveScreenshot("phone-header-390.png", {
    clip: { x: 0, y: 0, width: PHONE.width, height: 150 },
    maxDiffPixelRatio: 0.01,
  });

  // What the bar has no room for is one tap away, behind "More", and Escape closes it.
  await expect(page.getByTestId("nav-settings")).toBeHidden();
  const more = page.getByTestId("nav-more");
  await more.click();
  await expect(more).toHaveAttribute("aria-expanded", "true");
  for (const name of ["routines", "memory", "settings"])
    expect((await page.getByTestId(`nav-more-${name}`).boundingBox())!.height).toBeGreaterThanOrEqual(MIN_TARGET_PX);
  await more.press("Escape");
  await expect(page.getByTestId("nav-more-settings")).toHaveCount(0);
  await more.click();
  await page.getByTestId("nav-more-settings").click();
  await expect(page).toHaveURL(/\/settings$/);
  await expect(more).toHaveAttribute("aria-expanded", "false");
  await context.close();
});
