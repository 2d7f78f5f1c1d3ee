import { fileURLToPath } from "node:url";
import type * as acp from "@agentclientprotocol/sdk";

/**
 * Flattens an ACP prompt into the text the loop takes. Embedded resources are
 * inlined in tags the model recognises; links become references it can read
 * with read_file. Images (image blocks, and embedded resources with an image
 * type) are named here and attached by `promptImages`; other binary blobs are
 * named but not included.
 */
export function promptText(blocks: acp.ContentBlock[]): string {
  const parts: string[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        parts.push(block.text);
        break;
      case "resource_link":
        parts.push(
          `[File: ${displayUri(block.uri)}${block.name && !block.uri.endsWith(block.name) ? ` (${block.name})` : ""}]`,
        );
        break;
      case "resource": {
        const resource = block.resource;
        if ("text" in resource)
          parts.push(`<resource uri="${displayUri(resource.uri)}">\n${resource.text}\n</resource>`);
        else if (resource.mimeType?.startsWith("image/"))
          parts.push(`[Attached image ${displayUri(resource.uri)} (${resource.mimeType})]`);
        else
          parts.push(
            `[Attached binary resource ${displayUri(resource.uri)} (${resource.mimeType ?? "unknown type"}) was not included.]`,
          );
        break;
      }
      case "image":
        parts.push(
          `[Attached image${block.uri ? ` ${displayUri(block.uri)}` : ""} (${block.mimeType}, ${approxBytes(block.data)} bytes)]`,
        );
        break;
      case "audio":
        parts.push(`[Attached audio (${block.mimeType}) was not included.]`);
        break;
    }
  }
  return parts.join("\n\n").trim();
}

/** The prompt's images as `data:` URLs, in order, for the model's image_url content parts. */
export function promptImages(blocks: acp.ContentBlock[]): string[] {
  const urls: string[] = [];
  for (const block of blocks) {
    if (block.type === "image" && block.data) urls.push(`data:${block.mimeType};base64,${block.data}`);
    else if (block.type === "image" && block.uri && /^https?:/.test(block.uri)) urls.push(block.uri);
    else if (block.type === "resource" && "blob" in block.resource && block.resource.mimeType?.startsWith("image/")) {
      urls.push(`data:${block.resource.mimeType};base64,${block.resource.blob}`);
    }
  }
  return urls;
}

function displayUri(uri: string): string {
  if (!uri.startsWith("file://")) return uri;
  try {
    return fileURLToPath(uri);
  } catch {
    // not a local file URL: shown as it is
    return uri;
  }
}

function approxBytes(base64: string): number {
  return Math.floor((base64.length * 3) / 4);
}
