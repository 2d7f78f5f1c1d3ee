import path from "node:path";
import type { BrowserContext, Worker } from "@playwright/test";
import { PushService } from "../integration/notify/push-service";
import { SessionPage } from "./pages/session-page";
import { bridgeApi, e2e, expect, login, newSession, scriptLlm, test } from "./fixtures";

/**
 * Web Push on a phone-sized page: the bridge pushes a waiting approval to a push
 * service on loopback (which decrypts it); the test hands that payload to the app's service worker
 * with the DevTools protocol, the notification shows its actions, a tap on one is dispatched as the
 * worker's `notificationclick` (decided by the worker's fetch with the action token, no cookie),
 * and the session shows the result.
 */
const origin = () => e2e.baseUrl;

// Each test registers a worker, runs a turn and opens a page: on this two-core machine that is close to the default minute.
test.describe.configure({ timeout: 150_000 });
const shell = (command: string) => ({ toolCalls: [{ name: "shell", arguments: { command } }] });

interface Phone {
  context: BrowserContext;
  pushService: PushService;
  name: string;
  close(): Promise<void>;
}

/** A 390 × 844 phone whose service worker is registered, subscribed (through the API) to a loopback push service. */
async function phone(browser: import("@playwright/test").Browser): Promise<Phone> {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  await context.grantPermissions(["notifications"], { origin: origin() });
  const pushService = await new PushService().start();
  const name = `e2e-phone-${Date.now()}`;
  const device = pushService.device(name);
  const page = await context.newPage();
  await login(page);
  expect(await page.evaluate(() => navigator.serviceWorker.ready.then(() => true))).toBe(true);
  await page.close();
  await bridgeApi("/api/v1/push/subscriptions", { endpoint: device.endpoint, keys: device.keys, device: "E2E phone" });
  return {
    context,
    pushService,
    name,
    async close() {
      await bridgeApi("/api/v1/push/subscriptions", { endpoint: device.endpoint }, "DELETE").catch(() => undefined);
      await pushService.close();
      await context.close();
    },
  };
}

/** The n-th notice the push service decrypted for the phone. */
async function pushed(device: Phone, n: number): Promise<Record<string, unknown>> {
  await expect.poll(() => device.pushService.of(device.name).length, { timeout: 20_000 }).toBeGreaterThan(n);
  return device.pushService.of(device.name)[n];
}

/** Hands the payload to the service worker as a push, through the DevTools protocol; returns the worker. */
async function deliver(context: BrowserContext, notice: Record<string, unknown>): Promise<Worker> {
  const blank = await context.newPage();
  const cdp = await context.newCDPSession(blank);
  const registrations: { registrationId: string; scopeURL: string }[] = [];
  cdp.on("ServiceWorker.workerRegistrationUpdated", (event) => registrations.push(...event.registrations));
  await cdp.send("ServiceWorker.enable");
  const ours = () => registrations.find((r) => r.scopeURL.startsWith(origin()));
  await expect.poll(() => ours() !== undefined, { timeout: 10_000 }).toBe(true);
  await cdp.send("ServiceWorker.deliverPushMessage", {
    origin: origin(),
    registrationId: ours()!.registrationId,
    data: JSON.stringify(notice),
  });
  await blank.close();
  const workerOf = () => context.serviceWorkers().find((w) => w.url().startsWith(origin()));
  await expect.poll(() => workerOf() !== undefined, { timeout: 10_000 }).toBe(true);
  return workerOf()!;
}

/** What the specs use of a service worker's global scope (the DOM types do not describe it). */
interface WorkerScope {
  registration: ServiceWorkerRegistration;
  dispatchEvent(event: Event): boolean;
  NotificationEvent: new (type: string, init: { notification: Notification; action: string }) => Event;
}

async function shownNotifications(worker: Worker) {
  return worker.evaluate(async () => {
    const scope = self as unknown as WorkerScope;
    return (await scope.registration.getNotifications()).map((n) => ({
      title: n.title,
      body: n.body,
      tag: n.tag,
      actions: ((n as Notification & { actions?: { action: string }[] }).actions ?? []).map((a) => a.action),
    }));
  });
}

/** A tap on the notification's button `action`, as the browser would dispatch it. */
async function tap(worker: Worker, tag: string, action: string): Promise<void> {
  await worker.evaluate(
    async ({ tag, action }) => {
      const scope = self as unknown as WorkerScope;
      const [notification] = await scope.registration.getNotifications({ tag });
      scope.dispatchEvent(new scope.NotificationEvent("notificationclick", { notification, action }));
    },
    { tag, action },
  );
}

async function statusOf(approvalId: unknown): Promise<string> {
  return (await bridgeApi<{ status: string }>(`/api/v1/approvals/${approvalId as string}`)).status;
}

test("a push arrives with the page closed, Allow on the notification decides, and the session shows it", async ({
  browser,
}) => {
  const device = await phone(browser);
  try {
    const file = `pushed-${Date.now()}.txt`;
    const { id: sessionId } = await newSession("push-allow", { yolo: false });
    await scriptLlm(shell(`touch ${file}`), { text: "Made it from the phone." });
    const stream = fetch(`${origin()}/api/v1/chat/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${e2e.token}`, "content-type": "application/json" },
      body: JSON.stringify({ message: "make the file", session_id: sessionId }),
    });
    const notice = await pushed(device, 0);
    expect(notice).toMatchObject({ type: "approval.requested", session_id: sessionId, tool: "shell" });

    // No page of the app is open: the push wakes the worker, which shows the notification.
    expect(device.context.pages()).toHaveLength(0);
    const worker = await deliver(device.context, notice);
    await expect.poll(async () => (await shownNotifications(worker)).length, { timeout: 10_000 }).toBe(1);
    const [shown] = await shownNotifications(worker);
    expect(shown.title).toBe(notice.title);
    expect(shown.body).toContain(`touch ${file}`);
    // Chromium shows Notification.maxActions buttons (2): Allow once and Reject; a tap on the notification opens.
    const maxActions = await worker.evaluate(() => (Notification as unknown as { maxActions: number }).maxActions);
    expect(shown.actions).toEqual(["allow", "reject", "open"].slice(0, maxActions));
    expect(shown.actions.slice(0, 2)).toEqual(["allow", "reject"]);

    await tap(worker, shown.tag, "allow");
    await expect.poll(() => statusOf(notice.approval_id), { timeout: 15_000 }).toBe("approved");
    await (await stream).text();

    const session = await device.context.newPage();
    await new SessionPage(session).goto(origin(), sessionId);
    await expect(session.getByText("Made it from the phone.")).toBeVisible({ timeout: 15_000 });
    await session.screenshot({ path: path.join(process.env.WL_SCREENS ?? "/tmp", "push-phone-allowed.png") });

    // Where a person turns pushes on: the bell's menu, and Settings with their devices.
    await session.getByTestId("attention-menu").click();
    await expect(session.getByTestId("attention-popover").getByTestId("push-enable-here")).toBeVisible();
    await session.screenshot({ path: path.join(process.env.WL_SCREENS ?? "/tmp", "push-phone-bell.png") });
    await session.goto(`${origin()}/settings`);
    const listed = session.getByTestId("push-device").filter({ hasText: "E2E phone" });
    await expect(listed).toHaveCount(1);
    await listed.scrollIntoViewIfNeeded();
    await session.screenshot({ path: path.join(process.env.WL_SCREENS ?? "/tmp", "push-phone-settings.png") });
  } finally {
    await device.close();
  }
});

test("Open lands on the waiting request with its command in view; Reject on the notification decides it", async ({
  browser,
}) => {
  const device = await phone(browser);
  try {
    const { id: sessionId } = await newSession("push-open", { yolo: false });
    await scriptLlm(shell("rm -rf build-output"), { text: "never reached" });
    const stream = fetch(`${origin()}/api/v1/chat/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${e2e.token}`, "content-type": "application/json" },
      body: JSON.stringify({ message: "clean up", session_id: sessionId }),
    });
    const notice = await pushed(device, 0);
    const worker = await deliver(device.context, notice);
    await expect.poll(async () => (await shownNotifications(worker)).length, { timeout: 10_000 }).toBe(1);

    // Where Open (a tap on the notification) lands: the session, scrolled to the request.
    const page = await device.context.newPage();
    await page.goto(`${origin()}/s/${sessionId}?approval=${notice.approval_id as string}`);
    await new SessionPage(page).waitLive();
    const card = page.locator(`[data-approval-id="${notice.approval_id as string}"]`);
    await expect(card).toHaveAttribute("data-revealed", "true");
    await expect(card).toBeInViewport();
    await expect(card).toContainText("rm -rf build-output");
    await page.screenshot({ path: path.join(process.env.WL_SCREENS ?? "/tmp", "push-phone-landing.png") });

    const [shown] = await shownNotifications(worker);
    await tap(worker, shown.tag, "reject");
    await expect.poll(() => statusOf(notice.approval_id), { timeout: 15_000 }).toBe("rejected");
    // The open page hears the decision live: the card goes.
    await expect(card).toHaveCount(0, { timeout: 15_000 });
    await (await stream).text();
  } finally {
    await device.close();
  }
});
