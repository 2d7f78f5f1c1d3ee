import fs from "node:fs/promises";
import path from "node:path";
import { test as base, expect, type Page } from "@playwright/test";

/** Addresses published by global-setup.ts. */
export const e2e = {
  get readyUrl() {
    return required("WL_E2E_READY_URL");
  },
  get baseUrl() {
    return required("WL_E2E_BASE_URL");
  },
  get token() {
    return required("WL_E2E_TOKEN");
  },
  get fakeUrl() {
    return required("WL_E2E_FAKE_URL");
  },
  get workspace() {
    return required("WL_E2E_WORKSPACE");
  },
};

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set; run the specs through playwright.config.ts (global setup)`);
  return value;
}

/** Queues scripted replies on the fake LLM (see tests/fake-llm/types.ts). */
export async function scriptLlm(...responses: unknown[]): Promise<void> {
  const response = await fetch(new URL("/__admin/script", e2e.fakeUrl), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(responses),
  });
  if (!response.ok) throw new Error(`scripting the fake LLM failed: ${response.status}`);
}

/** Calls the bridge's API with the token, as a script would. */
export async function bridgeApi<T>(pathname: string, body?: unknown, method?: string): Promise<T> {
  const response = await fetch(`${e2e.baseUrl}${pathname}`, {
    method: method ?? (body === undefined ? "GET" : "POST"),
    headers: {
      authorization: `Bearer ${e2e.token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${pathname}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** A fresh folder inside the e2e workspace root, so specs don't see each other's files. */
export async function freshWorkspace(name: string): Promise<string> {
  const dir = path.join(e2e.workspace, `${name}-${Date.now()}`);
  await fs.mkdir(dir, { recursive: true });
  return dir;
}

/** A session on a fresh folder holding `files` (yolo unless told otherwise). */
export async function newSession(name: string, options: { yolo?: boolean; files?: Record<string, string> } = {}) {
  const workspace = await freshWorkspace(name);
  for (const [file, content] of Object.entries(options.files ?? {})) {
    await fs.mkdir(path.dirname(path.join(workspace, file)), { recursive: true });
    await fs.writeFile(path.join(workspace, file), content);
  }
  const { id } = await bridgeApi<{ id: string }>("/api/v1/sessions", {
    workspace,
    yolo: options.yolo ?? true,
    title: name,
  });
  return { id, workspace };
}

/** Logs the page in by visiting the printed URL (sets the cookie, strips the token). */
export async function login(page: Page): Promise<void> {
  await page.goto(e2e.readyUrl);
  await expect(page).toHaveURL(`${e2e.baseUrl}/`);
}

/**
 * Every test starts with the shared fake LLM's queue empty: a test that fails leaves its scripted replies
 * behind, and the next test's turns would answer with them (one failure cascading through the specs).
 * A test that fails prints what its pages showed and what the model was asked, so a failure seen only
 * in CI's log can still be understood.
 */
export const test = base.extend<{ freshLlm: void }>({
  freshLlm: [
    async ({ context }, use, testInfo) => {
      const response = await fetch(new URL("/__admin/reset", e2e.fakeUrl), { method: "POST" });
      if (!response.ok) throw new Error(`fake LLM reset: HTTP ${response.status}`);
      await use();
      if (testInfo.status !== testInfo.expectedStatus) {
        // Every open page, the test's own contexts' too (some specs open theirs).
        const pages = (context.browser()?.contexts() ?? [context]).flatMap((each) => each.pages());
        console.error(await failureReport(pages));
      }
    },
    { auto: true },
  ],
});
export { expect };

async function failureReport(pages: Page[]): Promise<string> {
  const lines = ["[e2e] what the pages showed when the test failed:"];
  for (const page of pages) {
    const text = await page
      .getByTestId("agent-panel")
      .innerText({ timeout: 1_000 })
      .catch(() => page.locator("body").innerText({ timeout: 1_000 }))
      .catch((error: Error) => `(unreadable: ${error.message})`);
    lines.push(`--- ${page.url()}`, text.slice(-2_000));
    const sessionId = /\/s\/([^/?#]+)/.exec(page.url())?.[1];
    if (sessionId) lines.push(`--- its session's events: ${await eventSummary(sessionId)}`);
  }
  const requests = (await fetch(new URL("/__admin/requests", e2e.fakeUrl))
    .then((res) => res.json())
    .catch(() => [])) as { body?: { messages?: { role: string; content?: unknown }[] } }[];
  lines.push(`--- the fake model got ${requests.length} request(s) in this test; each one's last message:`);
  for (const request of requests) {
    const last = request.body?.messages?.at(-1);
    lines.push(`  ${last?.role ?? "?"}: ${JSON.stringify(last?.content ?? null).slice(0, 120)}`);
  }
  return lines.join("\n");
}

/** The types of a session's logged events, in order: whether a prompt reached the bridge and how far its turn got. */
async function eventSummary(sessionId: string): Promise<string> {
  try {
    const events = await bridgeApi<{ type: string }[]>(`/api/v1/sessions/${encodeURIComponent(sessionId)}/events`);
    return events.map((event) => event.type).join(", ") || "(none)";
  } catch (error) {
    return `(unreadable: ${error instanceof Error ? error.message : String(error)})`;
  }
}
