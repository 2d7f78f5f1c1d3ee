/**
 * What the proxy serves on a preview origin itself: a frame page
 * that holds the previewed page in a same-origin frame, and the picker script that reaches into it.
 * The IDE's Preview panel frames the frame page (a different origin) and talks to it with
 * postMessage only: `{worldline: "preview", type: "pick" | "reload" | "navigate", …}` in, and
 * `location`, `picked`, `pick-cancelled` out (server/protocol/preview.ts checks them). Messages are
 * taken only from the parent window on an IDE origin and sent only to the IDE's origins.
 */
export const FRAME_PATH = "/__worldline/frame";
export const PICKER_PATH = "/__worldline/picker.js";

export function framePage(): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Preview</title>
<style>html,body{margin:0;height:100%;overflow:hidden}iframe{border:0;width:100%;height:100%;display:block}
#wl-pick{position:fixed;pointer-events:none;border:2px solid #3b82f6;background:rgba(59,130,246,.15);display:none;z-index:2147483647}</style>
</head><body><iframe id="wl-app" title="Previewed page"></iframe><div id="wl-pick"></div>
<script src="${PICKER_PATH}"></script></body></html>
`;
}

export function pickerScript(ideOrigins: readonly string[]): string {
  return `"use strict";
(() => {
  const IDE = ${JSON.stringify(ideOrigins)};
  const frame = document.getElementById("wl-app");
  const box = document.getElementById("wl-pick");
  const start = new URLSearchParams(location.search).get("path") || "/";
  const safe = (p) => (typeof p === "string" && p.startsWith("/") && !p.startsWith("//") && !p.startsWith("/\\\\") ? p : "/");
  frame.src = safe(start);
  let picking = false;
  const post = (message) => { for (const origin of IDE) window.parent.postMessage({ worldline: "preview", ...message }, origin); };
  const doc = () => { try { return frame.contentDocument; } catch { return null; } };
  const here = () => { try { const l = frame.contentWindow.location; return l.pathname + l.search + l.hash; } catch { return "/"; } };

  function selectorOf(el) {
    const parts = [];
    for (let node = el; node && node.nodeType === 1 && parts.length < 5; node = node.parentElement) {
      const tid = node.getAttribute("data-testid");
      if (tid) { parts.unshift('[data-testid="' + CSS.escape(tid) + '"]'); break; }
      if (node.id) { parts.unshift("#" + CSS.escape(node.id)); break; }
      const tag = node.tagName.toLowerCase();
      if (tag === "html" || tag === "body") { parts.unshift(tag); break; }
      const parent = node.parentElement;
      const same = parent ? [...parent.children].filter((c) => c.tagName === node.tagName) : [];
      parts.unshift(same.length > 1 ? tag + ":nth-of-type(" + (same.indexOf(node) + 1) + ")" : tag);
    }
    return parts.join(" > ");
  }
  function highlight(event) {
    const r = event.target.getBoundingClientRect();
    Object.assign(box.style, { display: "block", left: r.left + "px", top: r.top + "px", width: r.width + "px", height: r.height + "px" });
  }
  function choose(event) {
    event.preventDefault();
    event.stopPropagation();
    const el = event.target;
    const r = el.getBoundingClientRect();
    stop();
    post({
      type: "picked",
      selector: selectorOf(el),
      text: (el.innerText || el.textContent || "").trim().slice(0, 2000),
      rect: { x: r.left, y: r.top, width: r.width, height: r.height },
      viewport: { width: frame.clientWidth, height: frame.clientHeight },
      path: here(),
    });
  }
  function cancel(event) { if (event.key === "Escape") { stop(); post({ type: "pick-cancelled" }); } }
  function listen(on) {
    const d = doc();
    if (!d) return;
    const method = on ? "addEventListener" : "removeEventListener";
    d[method]("mouseover", highlight, true);
    d[method]("click", choose, true);
    d[method]("keydown", cancel, true);
  }
  function stop() { picking = false; listen(false); box.style.display = "none"; }
  frame.addEventListener("load", () => { post({ type: "location", path: here() }); if (picking) listen(true); });
  window.addEventListener("message", (event) => {
    if (event.source !== window.parent || !IDE.includes(event.origin)) return;
    const m = event.data;
    if (!m || m.worldline !== "preview") return;
    if (m.type === "pick") { if (m.on) { picking = true; listen(true); } else stop(); }
    if (m.type === "reload") { try { frame.contentWindow.location.reload(); } catch { frame.src = frame.src; } }
    if (m.type === "navigate") frame.src = safe(m.path);
  });
})();
`;
}
