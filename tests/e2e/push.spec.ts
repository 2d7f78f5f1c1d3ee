import fs from "node:fs";
import path from "node:path";
import { PushService } from "../integration/notify/push-service";
import { SessionPage } from "./pages/session-page";
import { bridgeApi, e2e, expect, login, newSession, scriptLlm, test } from "./fixtures";

/**
 * Web Push on a phone-sized page (DESIGN.md §17): the bridge pushes a waiting approval to a push
 * service on loopback (which decrypts it); the test hands that payload to the page's service worker
 * with the DevTools protocol while no page of the app is open, the notification shows Allow once,
 * Reject and Open, its Allow decides (the worker's fetch with the action token, no cookie), and the
 * session shows the turn carried on.
 */
test("a push arrives with the page closed, Allow on the notification decides, and the session shows it", async ({
  browser,
}) => {
  const origin = e2e.baseUrl;
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  await context.grantPermissions(["notifications"], { origin });
  const pushService = await new PushService().start();
  const name = `e2e-phone-${Date.now()}`;
  const phone = pushService.device(name);
  try {
    // The page registers the service worker; then it is closed.
    const page = await context.newPage();
    await login(page);
    const registrationReady = await page.evaluate(() => navigator.serviceWorker.ready.then(() => true));
    expect(registrationReady).toBe(true);
    await page.close();
    await bridgeApi("/api/v1/push/subscriptions", { endpoint: phone.endpoint, keys: phone.keys, device: "E2E phone" });

    // A turn waits on a command; nobody has the session open.
    const file = `pushed-${Date.now()}.txt`;
    const { id: sessionId, workspace } = await newSession("push", { yolo: false });
    await scriptLlm(
      { toolCalls: [{ name: "shell", arguments: { command: `touch ${file}` } }] },
      { text: "Made it from the phone." },
    );
    const stream = fetch(`${origin}/api/v1/chat/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${e2e.token}`, "content-type": "application/json" },
      body: JSON.stringify({ message: "make the file", session_id: sessionId }),
    });
    await expect.poll(() => pushService.of(name).length, { timeout: 20_000 }).toBe(1);
    const [notice] = pushService.of(name);
    expect(notice).toMatchObject({ type: "approval.requested", session_id: sessionId, tool: "shell" });

    // Delivered to the worker through the DevTools protocol, from a page of another origin.
    const blank = await context.newPage();
    const cdp = await context.newCDPSession(blank);
    const registrations: { registrationId: string; scopeURL: string }[] = [];
    cdp.on("ServiceWorker.workerRegistrationUpdated", (event) => registrations.push(...event.registrations));
    await cdp.send("ServiceWorker.enable");
    await expect.poll(() => registrations.find((r) => r.scopeURL.startsWith(origin)), { timeout: 10_000 }).toBeTruthy();
    const registrationId = registrations.find((r) => r.scopeURL.startsWith(origin))!.registrationId;
    await cdp.send("ServiceWorker.deliverPushMessage", { origin, registrationId, data: JSON.stringify(notice) });

    const workerOf = () => context.serviceWorkers().find((w) => w.url().startsWith(origin));
    await expect.poll(() => workerOf() !== undefined, { timeout: 10_000 }).toBe(true);
    const worker = workerOf()!;
    const shown = async () =>
      worker.evaluate(async () => {
        const scope = self as unknown as { registration: ServiceWorkerRegistration };
        const all = await scope.registration.getNotifications();
        return all.map((n) => ({
          title: n.title,
          body: n.body,
          actions: ((n as Notification & { actions?: { action: string }[] }).actions ?? []).map((a) => a.action),
        }));
      });
    await expect.poll(async () => (await shown()).length, { timeout: 10_000 }).toBe(1);
    const [shownNotice] = await shown();
    expect(shownNotice.title).toBe(notice.title);
    expect(shownNotice.body).toContain(`touch ${file}`);
    expect(shownNotice.actions).toEqual(["allow", "reject", "open"]);

    // Allow once, as a tap on the notification's button would.
    await worker.evaluate(async () => {
      const scope = self as unknown as ServiceWorkerGlobalScope;
      const [notification] = await scope.registration.getNotifications();
      scope.dispatchEvent(new NotificationEvent("notificationclick", { notification, action: "allow" }));
    });
    await expect
      .poll(
        async () => (await bridgeApi<{ status: string }>(`/api/v1/approvals/${notice.approval_id as string}`)).status,
        {
          timeout: 15_000,
        },
      )
      .toBe("approved");
    await (await stream).text();
    expect(fs.existsSync(path.join(workspace, file))).toBe(true);

    // The session, opened where the notification's Open would land, shows the decision and the answer.
    const session = await context.newPage();
    await session.goto(`${origin}/s/${sessionId}?approval=${notice.approval_id as string}`);
    await new SessionPage(session).waitLive();
    await expect(session.getByText("Made it from the phone.")).toBeVisible({ timeout: 15_000 });
    await session.screenshot({ path: path.join(process.env.WL_SCREENS ?? "/tmp", "push-phone-session.png") });
  } finally {
    await bridgeApi("/api/v1/push/subscriptions", { endpoint: phone.endpoint }, "DELETE").catch(() => undefined);
    await pushService.close();
    await context.close();
  }
});
