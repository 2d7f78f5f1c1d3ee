import { fileURLToPath } from "node:url";
import type * as acp from "@agentclientprotocol/sdk";

/**
 * Flattens an ACP prompt into the text the loop takes. Embedded resources are
 * inlined in tags the model recognises; links become references it can read
 * with read_file. Images and binary blobs are named but not attached: the
 * runtime's prompt is text-only for now.
 */
export function promptText(blocks: acp.ContentBlock[]): string {
  const parts: string[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        parts.push(block.text);
        break;
      case "resource_link":
        parts.push(`[File: ${displayUri(block.uri)}${block.name && !block.uri.endsWith(block.name) ? ` (${block.name})` : ""}]`);
        break;
      case "resource": {
        const resource = block.resource;
        if ("text" in resource) parts.push(`<resource uri="${displayUri(resource.uri)}">\n${resource.text}\n</resource>`);
        else parts.push(`[Attached binary resource ${displayUri(resource.uri)} (${resource.mimeType ?? "unknown type"}) was not included.]`);
        break;
      }
      case "image":
        parts.push(`[Attached image${block.uri ? ` ${displayUri(block.uri)}` : ""} (${block.mimeType}, ${approxBytes(block.data)} bytes): images are not passed to the model yet.]`);
        break;
      case "audio":
        parts.push(`[Attached audio (${block.mimeType}) was not included.]`);
        break;
    }
  }
  return parts.join("\n\n").trim();
}

function displayUri(uri: string): string {
  if (!uri.startsWith("file://")) return uri;
  try {
    return fileURLToPath(uri);
  } catch {
    return uri;
  }
}

function approxBytes(base64: string): number {
  return Math.floor((base64.length * 3) / 4);
}
