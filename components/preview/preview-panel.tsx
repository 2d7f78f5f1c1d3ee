"use client";

import { useEffect, useRef, useState } from "react";
import { PreviewCapture, PreviewFrameMessage, type SessionPort } from "@/server/protocol";
import { api } from "@/components/transport/client";
import { insertIntoPrompt } from "@/components/shared/prompt-inserts";
import { usePorts } from "./use-ports";

/** The widths a page is looked at in: a phone's, a tablet's, and all the room there is. */
const WIDTHS = { phone: 375, tablet: 768, desktop: null } as const;
type Width = keyof typeof WIDTHS;

/** The preview origin's own pages (server/preview/picker.ts). */
const FRAME_PATH = "/__worldline/frame";

/**
 * The Preview panel: the session's ports, and the page of one of them on its own
 * origin in a frame, with an address bar, reload, phone/tablet/desktop widths and "Pick element",
 * which puts the element's selector, text and a screenshot into the prompt. The frame starts at
 * the IDE's authorize address, which hands the preview origin its cookie.
 */
export function PreviewPanel({ sessionId, canDrive }: { sessionId: string; canDrive: boolean }) {
  const { ports, error } = usePorts(sessionId);
  const [port, setPort] = useState<number | null>(null);
  const [path, setPath] = useState("/");
  const [address, setAddress] = useState("/");
  const [width, setWidth] = useState<Width>("desktop");
  const [picking, setPicking] = useState(false);
  const [loads, setLoads] = useState(0);
  const [notice, setNotice] = useState<string | null>(null);
  const frame = useRef<HTMLIFrameElement>(null);
  const active = ports?.find((entry) => entry.port === port) ?? null;
  const previewOrigin = active ? new URL(active.url).origin : null;

  const post = (message: Record<string, unknown>) => {
    if (previewOrigin) frame.current?.contentWindow?.postMessage({ worldline: "preview", ...message }, previewOrigin);
  };

  useEffect(() => {
    if (!previewOrigin || port === null) return;
    const onMessage = (event: MessageEvent) => {
      if (event.origin !== previewOrigin || event.source !== frame.current?.contentWindow) return;
      const parsed = PreviewFrameMessage.safeParse(event.data);
      if (!parsed.success) return;
      const message = parsed.data;
      if (message.type === "location") setAddress(message.path);
      if (message.type === "pick-cancelled") setPicking(false);
      if (message.type === "picked") {
        setPicking(false);
        void attachPicked(sessionId, port, message, setNotice);
      }
    };
    window.addEventListener("message", onMessage);
    return () => window.removeEventListener("message", onMessage);
  }, [previewOrigin, port, sessionId]);

  const open = (next: SessionPort) => {
    setPort(next.port);
    setPath("/");
    setAddress("/");
    setLoads((n) => n + 1);
  };
  const frameSrc =
    active === null
      ? null
      : authorizeUrl(sessionId, active.port, `${FRAME_PATH}?path=${encodeURIComponent(path)}&load=${loads}`);

  return (
    <div className="flex h-full min-h-0 flex-col bg-panel" data-testid="preview-panel">
      <div className="flex shrink-0 flex-wrap items-center gap-1 border-b border-border px-2 py-1 text-xs">
        {active ? (
          <>
            <button
              type="button"
              className="rounded px-2 py-0.5 hover:bg-border"
              onClick={() => setPort(null)}
              title="All ports"
            >
              :{active.port}
            </button>
            <form
              className="min-w-0 flex-1"
              onSubmit={(event) => {
                event.preventDefault();
                post({ type: "navigate", path: address.startsWith("/") ? address : `/${address}` });
              }}
            >
              <input
                className="w-full rounded border border-border bg-transparent px-2 py-0.5 font-mono"
                aria-label="Preview address"
                data-testid="preview-address"
                value={address}
                onChange={(event) => setAddress(event.target.value)}
              />
            </form>
            <button
              type="button"
              className="rounded px-2 py-0.5 hover:bg-border"
              onClick={() => post({ type: "reload" })}
              data-testid="preview-reload"
            >
              Reload
            </button>
            {(Object.keys(WIDTHS) as Width[]).map((name) => (
              <button
                key={name}
                type="button"
                aria-pressed={width === name}
                className={`rounded px-2 py-0.5 ${width === name ? "bg-border" : "hover:bg-border"}`}
                onClick={() => setWidth(name)}
                data-testid={`preview-width-${name}`}
              >
                {name[0].toUpperCase() + name.slice(1)}
              </button>
            ))}
            {canDrive ? (
              <button
                type="button"
                aria-pressed={picking}
                className={`rounded px-2 py-0.5 ${picking ? "bg-accent text-white" : "hover:bg-border"}`}
                onClick={() => {
                  post({ type: "pick", on: !picking });
                  setPicking(!picking);
                }}
                data-testid="preview-pick"
              >
                Pick element
              </button>
            ) : null}
            <a
              className="rounded px-2 py-0.5 hover:bg-border"
              href={authorizeUrl(sessionId, active.port, address)}
              target="_blank"
              rel="noreferrer"
            >
              Open
            </a>
          </>
        ) : (
          <span className="px-1 text-muted">Preview</span>
        )}
      </div>
      {notice ? (
        <div className="shrink-0 border-b border-border px-3 py-1 text-xs text-muted" role="status">
          {notice}
        </div>
      ) : null}
      {active && frameSrc ? (
        <div className="flex min-h-0 flex-1 justify-center overflow-auto bg-bg">
          <iframe
            ref={frame}
            key={`${active.port}-${loads}`}
            src={frameSrc}
            title={`Preview of port ${active.port}`}
            data-testid="preview-frame"
            className="h-full border-0 bg-white"
            style={{ width: WIDTHS[width] ?? "100%" }}
          />
        </div>
      ) : (
        <PortList ports={ports} error={error} onOpen={open} />
      )}
    </div>
  );
}

function PortList({
  ports,
  error,
  onOpen,
}: {
  ports: SessionPort[] | null;
  error: string | null;
  onOpen: (port: SessionPort) => void;
}) {
  if (error) return <p className="p-3 text-xs text-muted">{error}</p>;
  if (ports === null) return <p className="p-3 text-xs text-muted">Looking for ports…</p>;
  if (ports.length === 0)
    return (
      <p className="p-3 text-xs text-muted" data-testid="preview-no-ports">
        No ports yet. Start a dev server in a terminal (or ask the agent to): it shows up here.
      </p>
    );
  return (
    <ul className="divide-y divide-border text-xs" data-testid="preview-ports">
      {ports.map((entry) => (
        <li key={entry.port} className="flex items-center gap-2 px-3 py-2" data-testid="preview-port">
          <span className="font-mono">:{entry.port}</span>
          <span className="min-w-0 flex-1 truncate text-muted" title={entry.command}>
            {entry.command}
          </span>
          <button
            type="button"
            className="rounded border border-border px-2 py-0.5 hover:bg-border"
            onClick={() => onOpen(entry)}
            data-testid={`preview-open-${entry.port}`}
          >
            Preview
          </button>
        </li>
      ))}
    </ul>
  );
}

function authorizeUrl(sessionId: string, port: number, path: string): string {
  return `/api/v1/sessions/${encodeURIComponent(sessionId)}/preview/authorize?port=${port}&path=${encodeURIComponent(path)}`;
}

type Picked = Extract<PreviewFrameMessage, { type: "picked" }>;

/** The picked element into the prompt: its selector and text at once, its screenshot when the bridge has taken it. */
async function attachPicked(sessionId: string, port: number, picked: Picked, say: (text: string | null) => void) {
  const text = picked.text ? `\n> ${picked.text.slice(0, 500).replace(/\n/g, "\n> ")}` : "";
  insertIntoPrompt(sessionId, { text: `Element \`${picked.selector}\` on ${picked.path}:${text}`, images: [] });
  say("Taking a screenshot of the element…");
  try {
    const shot = await api(`/api/v1/sessions/${encodeURIComponent(sessionId)}/preview/capture`, PreviewCapture, {
      method: "POST",
      body: {
        port,
        path: picked.path,
        selector: picked.selector,
        width: Math.max(200, Math.round(picked.viewport.width)),
        height: Math.max(200, Math.round(picked.viewport.height)),
      },
    });
    const bytes = Uint8Array.from(atob(shot.dataBase64), (c) => c.charCodeAt(0));
    insertIntoPrompt(sessionId, { text: "", images: [new File([bytes], "element.png", { type: shot.mediaType })] });
    say(null);
  } catch (err) {
    // The selector and text are in already: they matter most.
    say(`No screenshot of the element: ${err instanceof Error ? err.message : String(err)}`);
  }
}
