"use client";

import { useState, type ClipboardEvent, type DragEvent } from "react";
import { MAX_PROMPT_IMAGES } from "@/server/protocol";
import { imageFiles, toAttachment, type Attachment } from "./attachments";

/**
 * The images attached to the next prompt: from the file picker, a paste or a drop, checked
 * against the model (`allowed`) and the per-message count; `say` reports a refusal.
 */
export function useAttachments({
  allowed,
  say,
  afterAttach,
}: {
  allowed: boolean;
  say: (message: string, level: "info" | "error") => void;
  afterAttach: () => void;
}) {
  const [attachments, setAttachments] = useState<Attachment[]>([]);
  const [dragging, setDragging] = useState(false);

  const attach = async (files: File[]) => {
    if (files.length === 0) return;
    if (!allowed) return say("This model does not take images (its capabilities are on the Settings page).", "error");
    if (attachments.length + files.length > MAX_PROMPT_IMAGES)
      return say(`At most ${MAX_PROMPT_IMAGES} images per message.`, "error");
    try {
      const added = await Promise.all(files.map(toAttachment));
      setAttachments((current) => [...current, ...added]);
      afterAttach();
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

  /** Handlers for the drop zone around the input. */
  const dropZone = {
    onDragOver: (event: DragEvent<HTMLDivElement>) => {
      if (!allowed || !Array.from(event.dataTransfer.types).includes("Files")) return;
      event.preventDefault();
      setDragging(true);
    },
    onDragLeave: () => setDragging(false),
    onDrop: (event: DragEvent<HTMLDivElement>) => {
      setDragging(false);
      const files = imageFiles(event.dataTransfer?.files);
      if (files.length === 0) return;
      event.preventDefault();
      void attach(files);
    },
  };

  return {
    attachments,
    dragging,
    attach,
    onPaste,
    dropZone,
    remove: (id: string) => setAttachments((current) => current.filter((a) => a.id !== id)),
    clear: () => setAttachments([]),
  };
}
