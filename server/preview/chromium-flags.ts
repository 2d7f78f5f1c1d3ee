/**
 * Chromium's launch flags where Worldline runs it: the agent's browser (browsers.ts), and every test
 * and bench that drives one. They work in a container as root (no sandbox) with no GPU.
 */

/**
 * What Playwright's own launch disables (playwright-core's chromiumSwitches). Chromium keeps only the
 * last `--disable-features` it is given, so a list of ours has to repeat them.
 */
const PLAYWRIGHT_DISABLED_FEATURES = [
  "AvoidUnnecessaryBeforeUnloadCheckSync",
  "DestroyProfileOnBrowserClose",
  "HttpsUpgrades",
  "HttpsFirstBalancedModeAutoEnable",
  "LensOverlay",
  "MediaRouter",
  "PaintHolding",
  "ThirdPartyStoragePartitioning",
  "AvoidCorsURLLoaderRestartOnRedirect",
  "OptimizationHints",
  "NetworkTimeServiceQuerying",
  "AimEnabled",
  "PreconnectToSearch",
];

/**
 * The address bar's suggestion popups, which headless Chromium still builds as two WebUI pages in
 * their own renderer for every window it opens, with no address bar to show them under. Without
 * them, ten browser contexts, each with a page that loads and is typed into, took 9.3-10.4 s of
 * Chromium's CPU instead of 16.4-18.0 s, and 6.1-6.7 s of wall time instead of 9.3-9.9 s; the browser
 * suite, 484 s instead of 574 s.
 */
const OMNIBOX_POPUPS = ["WebUIOmniboxPopup", "WebUIOmniboxAimPopup", "WebUIOmniboxFullPopup"];

export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  `--disable-features=${[...PLAYWRIGHT_DISABLED_FEATURES, ...OMNIBOX_POPUPS].join(",")}`,
];
