import * as z from "zod";

/**
 * Images attached to a prompt (pasted or dropped in the chat input). The full image
 * goes to the model and into the model-facing history; the event log only keeps a
 * small preview the browser made (≤ IMAGE_PREVIEW_MAX_CHARS), so a session with many
 * screenshots doesn't replay megabytes to every tab.
 */
export const PROMPT_IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;
export type PromptImageType = (typeof PROMPT_IMAGE_TYPES)[number];
/** Per image, decoded. The UI re-encodes larger pictures (and any side over 2048 px) to fit. */
export const MAX_PROMPT_IMAGE_BYTES = 2 * 1024 * 1024;
/** All images of one prompt together, decoded. */
export const MAX_PROMPT_IMAGES_TOTAL_BYTES = 6 * 1024 * 1024;
export const MAX_PROMPT_IMAGES = 6;
/** A `data:` URL of the thumbnail shown in the transcript (about 192 px on its long side). */
export const IMAGE_PREVIEW_MAX_CHARS = 24_000;
/** A socket frame must hold a prompt with its images as base64 plus its text. */
export const MAX_PROMPT_MESSAGE_BYTES = Math.ceil((MAX_PROMPT_IMAGES_TOTAL_BYTES * 4) / 3) + 1024 * 1024;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const PREVIEW = /^data:image\/(png|jpeg|webp);base64,[A-Za-z0-9+/]+={0,2}$/;

/** Decoded size of a base64 string (without decoding it). */
export function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - padding;
}

/** The first bytes say what the file is; a PNG labelled image/jpeg is refused. */
export function imageMatchesType(mediaType: PromptImageType, dataBase64: string): boolean {
  let head: string;
  try {
    head = atob(dataBase64.slice(0, 24));
  } catch {
    // not base64: it cannot be the type it claims
    return false;
  }
  switch (mediaType) {
    case "image/png":
      return head.startsWith("\x89PNG\r\n\x1a\n");
    case "image/jpeg":
      return head.startsWith("\xff\xd8\xff");
    case "image/gif":
      return head.startsWith("GIF87a") || head.startsWith("GIF89a");
    case "image/webp":
      return head.startsWith("RIFF") && head.slice(8, 12) === "WEBP";
  }
}

export const PromptImage = z
  .object({
    mediaType: z.enum(PROMPT_IMAGE_TYPES),
    dataBase64: z
      .string()
      .min(8)
      .max(Math.ceil((MAX_PROMPT_IMAGE_BYTES * 4) / 3) + 4)
      .regex(BASE64, "not base64"),
    /** Thumbnail for the transcript, made by the client. */
    preview: z.string().max(IMAGE_PREVIEW_MAX_CHARS).regex(PREVIEW, "not a data: image URL").optional(),
  })
  .strict()
  .refine((image) => base64Bytes(image.dataBase64) <= MAX_PROMPT_IMAGE_BYTES, {
    message: `an image may have at most ${MAX_PROMPT_IMAGE_BYTES} bytes`,
  })
  .refine((image) => imageMatchesType(image.mediaType, image.dataBase64), {
    message: "the image data does not match its media type",
  });
export type PromptImage = z.infer<typeof PromptImage>;

export const PromptImages = z
  .array(PromptImage)
  .max(MAX_PROMPT_IMAGES)
  .refine(
    (images) => images.reduce((sum, image) => sum + base64Bytes(image.dataBase64), 0) <= MAX_PROMPT_IMAGES_TOTAL_BYTES,
    {
      message: `the images of a prompt may have at most ${MAX_PROMPT_IMAGES_TOTAL_BYTES} bytes together`,
    },
  );

/** What the event log keeps of an attached image. */
export const UserImageRef = z.object({
  mediaType: z.string().max(40),
  bytes: z.number().int().min(0),
  preview: z.string().max(IMAGE_PREVIEW_MAX_CHARS).optional(),
});
export type UserImageRef = z.infer<typeof UserImageRef>;

/** A prompt image as the runtime takes it (server/agent PromptOptions.images) and the event's reference. */
export function imageDataUrl(image: PromptImage): string {
  return `data:${image.mediaType};base64,${image.dataBase64}`;
}

/** The event's reference for an image `data:` URL (mediaType, size), with the client's preview if any. */
export function imageRef(url: string, preview?: string): UserImageRef {
  const match = /^data:([^;,]+);base64,/.exec(url);
  const bytes = match ? base64Bytes(url.slice(match[0].length)) : 0;
  return { mediaType: match?.[1] ?? "image", bytes, ...(preview ? { preview } : {}) };
}
