"use client";

import { useRouter } from "next/navigation";
import { useEffect, useRef, useState, type KeyboardEvent, type RefObject } from "react";
import { MAX_PROMPT_IMAGES_TOTAL_BYTES } from "@/server/protocol";
import { runInTerminal } from "@/components/terminal/run-in-terminal";
import { command } from "@/components/transport/client";
import { imageFiles } from "./attachments";
import { AttachmentStrip, CompletionMenu, InputNotice, ThinkingToggle } from "./prompt-input-parts";
import { runSlashCommand } from "./slash-commands";
import { PlanModeToggle, setPlanMode } from "@/components/review/plan-mode";
import { useAttachments } from "./use-attachments";
import { usePromptInserts } from "@/components/shared/prompt-inserts";
import { useCompletionMenu } from "./use-completion-menu";
import { usePromptHistory } from "./use-prompt-history";

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
 * Each concern is a hook of its own: usePromptHistory, useAttachments, useCompletionMenu.
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
  const fileInput = useRef<HTMLInputElement>(null);
  const [text, setText] = useState("");
  const [caret, setCaret] = useState(0);
  const [notice, setNotice] = useState<{ text: string; level: "info" | "error" } | null>(null);
  const [sending, setSending] = useState(false);
  const [thinking, setThinking] = useState(true);
  const [shellMode, setShellMode] = useState(false);
  const say = (message: string, level: "info" | "error" = "info") => setNotice({ text: message, level });
  const history = usePromptHistory(workspace);
  const images = useAttachments({ allowed: imagesAllowed, say, afterAttach: () => area.current?.focus() });
  const completion = useCompletionMenu({ sessionId, text, caret, off: shellMode, setText, setCaret, area });
  const listId = `${sessionId}-completions`;
  useFocusShortcut(area);
  usePromptInserts(sessionId, (insert) => {
    if (insert.text) setText((current) => (current.trim() ? `${current.trimEnd()}\n\n${insert.text}` : insert.text));
    if (insert.images.length) void images.attach(insert.images);
    area.current?.focus();
  });

  const send = async () => {
    const attached = shellMode ? [] : images.attachments;
    const prompt = text.trim() || (attached.length ? IMAGES_ONLY_TEXT : "");
    if (!prompt || sending) return;
    const imageBytes = attached.reduce((sum, image) => sum + image.bytes, 0);
    if (imageBytes > MAX_PROMPT_IMAGES_TOTAL_BYTES) {
      return say(
        `The images are ${(imageBytes / 1024 / 1024).toFixed(1)} MB together; the limit is ${MAX_PROMPT_IMAGES_TOTAL_BYTES / 1024 / 1024} MB.`,
        "error",
      );
    }
    setSending(true);
    setNotice(null);
    try {
      if (!attached.length) history.remember(prompt);
      if (shellMode) {
        await runInTerminal(sessionId, prompt);
        say("Sent to the session terminal (Ctrl+J shows it).");
      } else if (
        prompt.startsWith("/") &&
        (await runSlashCommand(prompt, { sessionId, workspace, yolo, plan, navigate: router.push, say }))
      ) {
        // handled locally
      } else if (attached.length) {
        // Steering carries text only: with images the message waits as a turn of its own.
        const wire = attached.map(({ mediaType, dataBase64, preview }) => ({
          mediaType,
          dataBase64,
          ...(preview ? { preview } : {}),
        }));
        await command("turn.prompt", { sessionId, text: prompt, reasoning: thinking ? "on" : "off", images: wire });
        images.clear();
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

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.nativeEvent.isComposing) return;
    if (completion.onKeyDown(event)) return;
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
    if (event.key === "ArrowUp") history.browse(-1, event, text, setText);
    if (event.key === "ArrowDown") history.browse(1, event, text, setText);
  };

  return (
    <div
      className={`relative shrink-0 border-t border-border bg-panel p-2 ${images.dragging ? "outline-dashed outline-2 -outline-offset-4 outline-accent" : ""}`}
      data-testid="prompt"
      {...images.dropZone}
    >
      {completion.open ? (
        <CompletionMenu
          listId={listId}
          kind={completion.kind}
          entries={completion.entries}
          picked={completion.picked}
        />
      ) : null}
      {notice ? <InputNotice text={notice.text} level={notice.level} /> : null}
      {images.attachments.length && !shellMode ? (
        <AttachmentStrip attachments={images.attachments} onRemove={images.remove} />
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
          aria-controls={completion.open ? listId : undefined}
          aria-activedescendant={completion.open ? `${listId}-${completion.picked}` : undefined}
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
            completion.reset();
          }}
          onSelect={(event) => setCaret(event.currentTarget.selectionStart)}
          onKeyDown={onKeyDown}
          onPaste={images.onPaste}
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
          disabled={(!text.trim() && !(images.attachments.length && !shellMode)) || sending}
          onClick={() => void send()}
          className="mb-0.5 rounded bg-accent px-2.5 py-1 font-medium text-bg disabled:opacity-40"
          title="Send (Enter)"
        >
          {running && !shellMode && !images.attachments.length ? "Steer" : "Send"}
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
                void images.attach(imageFiles(event.target.files));
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

/** Ctrl+L (⌘L) from anywhere on the page puts the keyboard in the prompt. */
function useFocusShortcut(area: RefObject<HTMLTextAreaElement | null>): void {
  useEffect(() => {
    const focus = (event: globalThis.KeyboardEvent) => {
      if (event.key === "l" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        area.current?.focus();
      }
    };
    window.addEventListener("keydown", focus);
    return () => window.removeEventListener("keydown", focus);
  }, [area]);
}
