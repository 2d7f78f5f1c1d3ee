"use client";

import {
  IMAGE_PREVIEW_MAX_CHARS,
  MAX_PROMPT_IMAGE_BYTES,
  PROMPT_IMAGE_TYPES,
  type PromptImage,
  type PromptImageType,
  type SettingsView,
} from "@/server/protocol";

/** Models scale larger pictures down anyway; beyond this the UI re-encodes before sending. */
const MAX_SIDE_PX = 2048;
/** The transcript thumbnail's long side. */
const PREVIEW_SIDE_PX = 192;

/** An image in the chat input, ready to send with the next prompt. */
export interface Attachment extends PromptImage {
  id: string;
  name: string;
  bytes: number;
  preview: string;
}

/**
 * Whether the session's model takes images. A model the Settings page lists answers
 * with its recorded capability; a model named only by the environment (or not listed)
 * is unknown, and then images are allowed and the provider has the last word.
 */
export function modelTakesImages(settings: SettingsView | null, sessionModel: string | null | undefined): boolean {
  if (!settings) return true;
  const models = settings.providers.flatMap((provider) =>
    provider.models.map((model) => ({ provider: provider.id, ...model })),
  );
  const named = sessionModel ?? settings.envModel;
  if (named) return models.find((model) => model.id === named)?.capabilities.images ?? true;
  const chosen = settings.defaultModel;
  if (!chosen) return true;
  return (
    models.find((model) => model.provider === chosen.providerId && model.id === chosen.model)?.capabilities.images ??
    true
  );
}

/** Image files among pasted or dropped items. */
export function imageFiles(list: FileList | null | undefined): File[] {
  return Array.from(list ?? []).filter((file) => file.type.startsWith("image/"));
}

/**
 * Reads a picture into an attachment: sent as is when it is a PNG, JPEG, GIF or WebP
 * within the size and side limits, otherwise re-encoded (scaled to 2048 px, WebP or
 * JPEG) so it fits; plus a small thumbnail for the transcript.
 */
export async function toAttachment(file: File): Promise<Attachment> {
  const bitmap = await createImageBitmap(file).catch(() => {
    throw new Error(`${file.name || "The image"} could not be read as an image.`);
  });
  try {
    const known = (PROMPT_IMAGE_TYPES as readonly string[]).includes(file.type);
    const fits = known && file.size <= MAX_PROMPT_IMAGE_BYTES && Math.max(bitmap.width, bitmap.height) <= MAX_SIDE_PX;
    const blob = fits ? file : await reencode(bitmap);
    const preview = thumbnail(bitmap);
    return {
      id: crypto.randomUUID(),
      name: file.name || "pasted image",
      mediaType: blob.type as PromptImageType,
      dataBase64: await toBase64(blob),
      bytes: blob.size,
      preview,
    };
  } finally {
    bitmap.close();
  }
}

async function reencode(bitmap: ImageBitmap): Promise<Blob> {
  let side = MAX_SIDE_PX;
  for (let attempt = 0; attempt < 6; attempt++) {
    const canvas = draw(bitmap, side, false);
    for (const quality of [0.9, 0.8, 0.65]) {
      let blob = await toBlob(canvas, "image/webp", quality);
      if (blob?.type !== "image/webp") blob = await toBlob(draw(bitmap, side, true), "image/jpeg", quality);
      if (blob && blob.size <= MAX_PROMPT_IMAGE_BYTES) return blob;
    }
    side = Math.round(side * 0.75);
  }
  throw new Error(
    `The image is too large even after scaling it down (limit ${Math.round(MAX_PROMPT_IMAGE_BYTES / 1024 / 1024)} MB).`,
  );
}

function thumbnail(bitmap: ImageBitmap): string {
  for (const side of [PREVIEW_SIDE_PX, 128, 96, 64]) {
    let url = draw(bitmap, side, false).toDataURL("image/webp", 0.75);
    if (!url.startsWith("data:image/webp")) url = draw(bitmap, side, true).toDataURL("image/jpeg", 0.75);
    if (url.length <= IMAGE_PREVIEW_MAX_CHARS) return url;
  }
  return "";
}

/** The bitmap scaled to fit `side`; `opaque` paints a white background first (for JPEG). */
function draw(bitmap: ImageBitmap, side: number, opaque: boolean): HTMLCanvasElement {
  const scale = Math.min(1, side / Math.max(bitmap.width, bitmap.height));
  const canvas = document.createElement("canvas");
  canvas.width = Math.max(1, Math.round(bitmap.width * scale));
  canvas.height = Math.max(1, Math.round(bitmap.height * scale));
  const g = canvas.getContext("2d");
  if (!g) throw new Error("This browser cannot prepare images (no canvas).");
  if (opaque) {
    g.fillStyle = "#fff";
    g.fillRect(0, 0, canvas.width, canvas.height);
  }
  g.drawImage(bitmap, 0, 0, canvas.width, canvas.height);
  return canvas;
}

function toBlob(canvas: HTMLCanvasElement, type: string, quality: number): Promise<Blob | null> {
  return new Promise((resolve) => canvas.toBlob(resolve, type, quality));
}

async function toBase64(blob: Blob): Promise<string> {
  const bytes = new Uint8Array(await blob.arrayBuffer());
  let binary = "";
  const CHUNK = 0x8000;
  for (let i = 0; i < bytes.length; i += CHUNK) binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  return btoa(binary);
}
