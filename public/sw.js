// Worldline's service worker: caches the app shell only, so an installed app opens at once and
// says so plainly when the bridge is not running. It never caches or answers API calls,
// socket.io or pages' data: those always go to the bridge (everything not matched below is
// left to the network untouched).
const CACHE = "worldline-shell-v1";
const PRECACHE = ["/offline.html", "/manifest.webmanifest", "/icons/icon-192.png", "/icons/icon-512.png"];

/** Build output under /_next/static/ is content-hashed: a cached copy is never stale. */
function isShellAsset(url) {
  return (
    url.origin === self.location.origin &&
    (url.pathname.startsWith("/_next/static/") || url.pathname.startsWith("/icons/") || PRECACHE.includes(url.pathname))
  );
}

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(PRECACHE))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((key) => key !== CACHE).map((key) => caches.delete(key))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (request.mode === "navigate") {
    // Pages come from the bridge; only when it cannot be reached, the offline note.
    event.respondWith(fetch(request).catch(() => caches.match("/offline.html")));
    return;
  }
  if (!isShellAsset(url)) return;
  event.respondWith(
    caches.match(request).then(
      (cached) =>
        cached ??
        fetch(request).then((response) => {
          if (response.ok) {
            const copy = response.clone();
            void caches.open(CACHE).then((cache) => cache.put(request, copy));
          }
          return response;
        }),
    ),
  );
});

// Web Push (README, "Notifications on your phone"): the bridge pushes a notice when a request
// waits or a turn ends and nobody has the session in a focused tab. The notice is JSON
// {type, session_id, title, summary, approval_id?, tool?, action_token?}; its action token decides
// that one approval once, through the approvals API, with no cookie.

self.addEventListener("push", (event) => {
  const notice = noticeOf(event.data);
  if (!notice) return;
  event.waitUntil(showNotice(notice));
});

self.addEventListener("notificationclick", (event) => {
  const notice = event.notification.data;
  event.notification.close();
  if (!notice || typeof notice.session_id !== "string") return;
  const work = clicked(notice, event.action);
  try {
    event.waitUntil(work);
  } catch {
    // A click dispatched by script (a test) cannot extend the worker's life; the work still runs.
  }
});

function noticeOf(data) {
  try {
    const notice = data ? data.json() : null;
    return notice && typeof notice.session_id === "string" && typeof notice.title === "string" ? notice : null;
  } catch {
    return null; // not ours: nothing to show
  }
}

function showNotice(notice) {
  const decides = Boolean(notice.action_token && notice.approval_id);
  const actions = decides
    ? [
        { action: "allow", title: "Allow once" },
        { action: "reject", title: "Reject" },
        { action: "open", title: "Open" },
      ]
    : [{ action: "open", title: "Open" }];
  // Browsers show at most Notification.maxActions buttons (Chromium: 2); a tap on the notification itself opens.
  return self.registration.showNotification(notice.title, {
    body: notice.summary,
    // The same tag as the open tab's own notification (components/attention), so one replaces the other.
    tag: notice.approval_id ? `approval:${notice.approval_id}` : `session:${notice.session_id}:${notice.type}`,
    data: notice,
    actions,
    icon: "/icons/icon-192.png",
    badge: "/icons/icon-192.png",
    // A request waits for an answer: it stays until acted on.
    requireInteraction: Boolean(notice.approval_id),
  });
}

async function clicked(notice, action) {
  if ((action === "allow" || action === "reject") && notice.action_token && notice.approval_id) {
    const decided = await decide(notice, action === "allow" ? "allow_once" : "reject");
    if (decided) return;
    // Used, expired, or decided elsewhere: the session shows where it stands.
  }
  await openSession(notice);
}

async function decide(notice, decision) {
  try {
    const response = await fetch(`/api/v1/approvals/${encodeURIComponent(notice.approval_id)}`, {
      method: "POST",
      credentials: "omit",
      headers: { authorization: `Bearer ${notice.action_token}`, "content-type": "application/json" },
      body: JSON.stringify({ decision }),
    });
    return response.ok;
  } catch {
    return false; // the bridge is unreachable: opening the session says so
  }
}

/** Focuses a tab of the session (landing on the request), or opens one. */
async function openSession(notice) {
  // A notice of no session (a routine run that never got one) names the page to open.
  if (typeof notice.url === "string" && /^\/(?!\/)/.test(notice.url)) return self.clients.openWindow(notice.url);
  const sessionPath = `/s/${encodeURIComponent(notice.session_id)}`;
  const target = notice.approval_id ? `${sessionPath}?approval=${encodeURIComponent(notice.approval_id)}` : sessionPath;
  const tabs = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  const tab = tabs.find((client) => new URL(client.url).pathname === sessionPath);
  if (!tab) return self.clients.openWindow(target);
  // The open page scrolls to the request itself (components/attention/use-push-landing.ts).
  if (notice.approval_id) tab.postMessage({ type: "worldline.reveal-approval", approvalId: notice.approval_id });
  return tab.focus();
}
