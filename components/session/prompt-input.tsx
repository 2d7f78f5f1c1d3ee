"use client";

import { useRouter } from "next/navigation";
import { useEffect, useRef, useState, type ClipboardEvent, type DragEvent, type KeyboardEvent } from "react";
import { MAX_PROMPT_IMAGES, MAX_PROMPT_IMAGES_TOTAL_BYTES } from "@/server/protocol";
import { runInTerminal } from "@/components/terminal/run-in-terminal";
import { command } from "@/components/transport/client";
import { imageFiles, toAttachment, type Attachment } from "./attachments";
import { AttachmentStrip, InputNotice, ThinkingToggle } from "./prompt-input-parts";
import { runSlashCommand, SLASH_COMMANDS } from "./slash-commands";
import { PlanModeToggle, setPlanMode } from "@/components/review/plan-mode";
import { mentionAt, useMentionSearch } from "./use-mentions";

/** Prompts remembered per workspace for ↑/↓. */
const HISTORY_LIMIT = 200;

export interface PromptInputProps {
  sessionId: string;
  workspace: string;
  running: boolean;
  stage?: string;
  yolo: boolean;
  plan?: boolean;
  /** The model takes images (or nobody knows): paste, drop and the attach button add them. */
  imagesAllowed?: boolean;
}

/** The text sent when a prompt is only images. */
const IMAGES_ONLY_TEXT = "(see the attached image)";

/**
 * The chat input: multi-line, history per workspace, @-mentions, /commands,
 * thinking toggle, shell mode (Ctrl+X), Stop, and steering while a turn runs.
 */
export function PromptInput({
  sessionId,
  workspace,
  running,
  stage,
  yolo,
  plan = false,
  imagesAllowed = true,
}: PromptInputProps) {
  const router = useRouter();
  const area = useRef<HTMLTextAreaElement>(null);
  const [text, setText] = useState("");
  const [caret, setCaret] = useState(0);
  const [notice, setNotice] = useState<{ text: string; level: "info" | "error" } | null>(null);
  const [sending, setSending] = useState(false);
  const [thinking, setThinking] = useState(true);
  const [shellMode, setShellMode] = useState(false);
  const [pick, setPick] = useState(0);
  const [attachments, setAttachments] = useState<Attachment[]>([]);
  const [dragging, setDragging] = useState(false);
  const fileInput = useRef<HTMLInputElement>(null);
  const history = useRef<{ items: string[]; index: number; draft: string }>({ items: [], index: -1, draft: "" });
  const historyKey = `worldline.history.${workspace}`;

  useEffect(() => {
    try {
      history.current = {
        items: JSON.parse(localStorage.getItem(historyKey) ?? "[]") as string[],
        index: -1,
        draft: "",
      };
    } catch {
      history.current = { items: [], index: -1, draft: "" };
    }
  }, [historyKey]);

  useEffect(() => {
    const focus = (event: globalThis.KeyboardEvent) => {
      if (event.key === "l" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        area.current?.focus();
      }
    };
    window.addEventListener("keydown", focus);
    return () => window.removeEventListener("keydown", focus);
  }, []);

  const mention = shellMode ? null : mentionAt(text, caret);
  const mentionFiles = useMentionSearch(sessionId, mention?.query ?? null);
  const slashQuery = !shellMode && /^\/\w*$/.test(text) ? text.slice(1) : null;
  const slashMatches = slashQuery === null ? [] : SLASH_COMMANDS.filter((c) => c.name.startsWith(slashQuery));
  const menu: { key: string; label: string; hint?: string; apply: () => void }[] = mention
    ? mentionFiles.map((file) => ({
        key: file,
        label: file,
        apply: () => {
          const next = `${text.slice(0, mention.start)}@${file} ${text.slice(caret)}`;
          setText(next);
          const pos = mention.start + file.length + 2;
          requestAnimationFrame(() => area.current?.setSelectionRange(pos, pos));
          setCaret(pos);
        },
      }))
    : slashMatches.map((c) => ({
        key: c.name,
        label: `/${c.name}${c.args ? ` ${c.args}` : ""}`,
        hint: c.help,
        apply: () => setText(`/${c.name}${c.args ? " " : ""}`),
      }));
  const menuOpen = menu.length > 0;

  const remember = (prompt: string) => {
    const items = [...history.current.items.filter((item) => item !== prompt), prompt].slice(-HISTORY_LIMIT);
    history.current = { items, index: -1, draft: "" };
    try {
      localStorage.setItem(historyKey, JSON.stringify(items));
    } catch {
      // History is a convenience; a full quota only loses it.
    }
  };

  const say = (message: string, level: "info" | "error" = "info") => setNotice({ text: message, level });

  const attach = async (files: File[]) => {
    if (files.length === 0) return;
    if (!imagesAllowed)
      return say("This model does not take images (its capabilities are on the Settings page).", "error");
    if (attachments.length + files.length > MAX_PROMPT_IMAGES)
      return say(`At most ${MAX_PROMPT_IMAGES} images per message.`, "error");
    try {
      const added = await Promise.all(files.map(toAttachment));
      setAttachments((current) => [...current, ...added]);
      area.current?.focus();
    } catch (err) {
      say(err instanceof Error ? err.message : String(err), "error");
    }
  };

  const onPaste = (event: ClipboardEvent<HTMLTextAreaElement>) => {
    const files = imageFiles(event.clipboardData?.files);
    if (files.length === 0) return; // text pastes as usual
    event.preventDefault();
    void attach(files);
  };

  const onDrop = (event: DragEvent<HTMLDivElement>) => {
    setDragging(false);
    const files = imageFiles(event.dataTransfer?.files);
    if (files.length === 0) return;
    event.preventDefault();
    void attach(files);
  };

  const send = async () => {
    const images = shellMode ? [] : attachments;
    const prompt = text.trim() || (images.length ? IMAGES_ONLY_TEXT : "");
    if (!prompt || sending) return;
    const imageBytes = images.reduce((sum, image) => sum + image.bytes, 0);
    if (imageBytes > MAX_PROMPT_IMAGES_TOTAL_BYTES) {
      return say(
        `The images are ${(imageBytes / 1024 / 1024).toFixed(1)} MB together; the limit is ${MAX_PROMPT_IMAGES_TOTAL_BYTES / 1024 / 1024} MB.`,
        "error",
      );
    }
    setSending(true);
    setNotice(null);
    try {
      if (!images.length) remember(prompt);
      if (shellMode) {
        await runInTerminal(sessionId, prompt);
        say("Sent to the session terminal (Ctrl+J shows it).");
      } else if (
        prompt.startsWith("/") &&
        (await runSlashCommand(prompt, { sessionId, workspace, yolo, plan, navigate: router.push, say }))
      ) {
        // handled locally
      } else if (images.length) {
        // Steering carries text only: with images the message waits as a turn of its own.
        const wire = images.map(({ mediaType, dataBase64, preview }) => ({
          mediaType,
          dataBase64,
          ...(preview ? { preview } : {}),
        }));
        await command("turn.prompt", { sessionId, text: prompt, reasoning: thinking ? "on" : "off", images: wire });
        setAttachments([]);
      } else if (running) {
        await command("turn.steer", { sessionId, text: prompt });
        say("Sent to the running turn; the agent sees it at its next step.");
      } else {
        await command("turn.prompt", { sessionId, text: prompt, reasoning: thinking ? "on" : "off" });
      }
      setText("");
      setCaret(0);
    } catch (err) {
      say(err instanceof Error ? err.message : String(err), "error");
    } finally {
      setSending(false);
    }
  };

  const cancel = async () => {
    try {
      await command("turn.cancel", { sessionId });
    } catch (err) {
      say(err instanceof Error ? err.message : String(err), "error");
    }
  };

  const browseHistory = (direction: -1 | 1, event: KeyboardEvent<HTMLTextAreaElement>) => {
    const el = event.currentTarget;
    const atEdge =
      direction === -1 ? !text.slice(0, el.selectionStart).includes("\n") : !text.slice(el.selectionEnd).includes("\n");
    const h = history.current;
    if (!atEdge || h.items.length === 0) return;
    if (direction === -1 && h.index === -1) h.draft = text;
    const index = h.index === -1 ? (direction === -1 ? h.items.length - 1 : -1) : h.index + direction;
    if (index < -1 || index >= h.items.length) return;
    event.preventDefault();
    h.index = index;
    setText(index === -1 ? h.draft : h.items[index]);
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.nativeEvent.isComposing) return;
    if (menuOpen && (event.key === "ArrowDown" || event.key === "ArrowUp")) {
      event.preventDefault();
      setPick((p) => (p + (event.key === "ArrowDown" ? 1 : -1) + menu.length) % menu.length);
      return;
    }
    const exactCommand = !mention && slashMatches.some((c) => `/${c.name}` === text.trim());
    if (menuOpen && (event.key === "Tab" || (event.key === "Enter" && !exactCommand))) {
      event.preventDefault();
      menu[Math.min(pick, menu.length - 1)].apply();
      setPick(0);
      return;
    }
    if (event.key === "Tab" && event.shiftKey) {
      event.preventDefault();
      void setPlanMode(sessionId, !plan).catch((err: Error) => say(err.message, "error"));
      return;
    }
    if (event.key === "x" && event.ctrlKey) {
      event.preventDefault();
      setShellMode((v) => !v);
      return;
    }
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      void send();
      return;
    }
    if (event.key === "Escape") {
      if (running) void cancel();
      else setNotice(null);
      return;
    }
    if (event.key === "ArrowUp") browseHistory(-1, event);
    if (event.key === "ArrowDown") browseHistory(1, event);
  };

  return (
    <div
      className={`relative shrink-0 border-t border-border bg-panel p-2 ${dragging ? "outline-dashed outline-2 -outline-offset-4 outline-accent" : ""}`}
      data-testid="prompt"
      onDragOver={(event) => {
        if (!imagesAllowed || !Array.from(event.dataTransfer.types).includes("Files")) return;
        event.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={onDrop}
    >
      {menuOpen ? (
        <ul
          id={`${sessionId}-completions`}
          role="listbox"
          aria-label={mention ? "Files" : "Commands"}
          className="absolute bottom-full left-2 right-2 mb-1 max-h-64 overflow-y-auto rounded-md border border-border bg-raised py-1 shadow-lg"
          data-testid={mention ? "mention-menu" : "slash-menu"}
        >
          {menu.map((entry, i) => (
            <li
              key={entry.key}
              id={`${sessionId}-completion-${i}`}
              role="option"
              aria-selected={i === pick}
              className={`flex cursor-pointer gap-3 px-3 py-1 font-mono text-xs ${i === pick ? "bg-accent/20 text-fg" : "text-muted"}`}
              onMouseDown={(event) => {
                event.preventDefault();
                entry.apply();
              }}
              data-testid="menu-option"
            >
              <span className="truncate">{entry.label}</span>
              {entry.hint ? <span className="ml-auto shrink-0 font-sans">{entry.hint}</span> : null}
            </li>
          ))}
        </ul>
      ) : null}
      {notice ? <InputNotice text={notice.text} level={notice.level} /> : null}
      {attachments.length && !shellMode ? (
        <AttachmentStrip
          attachments={attachments}
          onRemove={(id) => setAttachments((current) => current.filter((a) => a.id !== id))}
        />
      ) : null}
      <div
        className={`flex items-end gap-2 rounded-md border bg-bg px-2 py-1 ${shellMode ? "border-warn/60" : "border-border focus-within:border-accent"}`}
      >
        {shellMode ? (
          <span className="pb-1.5 font-mono text-warn" aria-hidden>
            $
          </span>
        ) : null}
        <textarea
          ref={area}
          data-testid="prompt-input"
          aria-label={shellMode ? "Shell command for the session terminal" : "Message the agent"}
          // The completion list is read through the textarea: ↑ ↓ move the option it points at.
          aria-controls={menuOpen ? `${sessionId}-completions` : undefined}
          aria-activedescendant={menuOpen ? `${sessionId}-completion-${Math.min(pick, menu.length - 1)}` : undefined}
          aria-keyshortcuts="Control+L"
          className="max-h-60 min-h-[2rem] flex-1 resize-none bg-transparent py-1.5 outline-none"
          rows={Math.min(10, Math.max(1, text.split("\n").length))}
          placeholder={
            shellMode
              ? "Run in the terminal (Ctrl+X back to chat)"
              : running
                ? "Steer the running turn… (Esc to stop)"
                : "Ask the agent · @ file · / command · Shift+Enter newline"
          }
          value={text}
          onChange={(event) => {
            setText(event.target.value);
            setCaret(event.target.selectionStart);
            setPick(0);
          }}
          onSelect={(event) => setCaret(event.currentTarget.selectionStart)}
          onKeyDown={onKeyDown}
          onPaste={onPaste}
        />
        {running ? (
          <button
            type="button"
            data-testid="stop-button"
            onClick={() => void cancel()}
            className="mb-0.5 rounded border border-danger/50 px-2.5 py-1 text-danger hover:bg-danger/10"
            title="Stop (Esc)"
          >
            Stop
          </button>
        ) : null}
        <button
          type="button"
          data-testid="send-button"
          disabled={(!text.trim() && !(attachments.length && !shellMode)) || sending}
          onClick={() => void send()}
          className="mb-0.5 rounded bg-accent px-2.5 py-1 font-medium text-bg disabled:opacity-40"
          title="Send (Enter)"
        >
          {running && !shellMode && !attachments.length ? "Steer" : "Send"}
        </button>
      </div>
      <div className="mt-1 flex items-center gap-3 px-1 text-[11px] text-muted">
        <ThinkingToggle on={thinking} onChange={setThinking} />
        <button
          type="button"
          className={shellMode ? "text-warn" : "hover:text-fg"}
          onClick={() => setShellMode((v) => !v)}
          data-testid="shell-toggle"
          aria-pressed={shellMode}
        >
          Shell <kbd>Ctrl+X</kbd>
        </button>
        <PlanModeToggle sessionId={sessionId} on={plan} />
        {imagesAllowed && !shellMode ? (
          <>
            <button
              type="button"
              className="hover:text-fg"
              onClick={() => fileInput.current?.click()}
              data-testid="attach-button"
              title="Attach images (or paste / drop them)"
            >
              Image
            </button>
            <input
              ref={fileInput}
              type="file"
              accept="image/png,image/jpeg,image/gif,image/webp,image/*"
              multiple
              hidden
              data-testid="attach-input"
              onChange={(event) => {
                void attach(imageFiles(event.target.files));
                event.target.value = "";
              }}
            />
          </>
        ) : null}
        <span className="ml-auto truncate" data-testid="turn-stage">
          {running ? `${stage ?? "working"}…` : "Enter send · ↑ history · /help"}
        </span>
      </div>
    </div>
  );
}
