import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import {
  AccessView,
  ApprovalView,
  CheckpointSettings,
  CheckpointView,
  CreatedShareLink,
  Deleted,
  DirectoryListing,
  FileContent,
  FileSearchResult,
  FileTreeListing,
  GitStatus,
  LayoutAnswer,
  McpStatusView,
  MemorySettings,
  MemoryView,
  PricesView,
  RecentWorkspaces,
  RuleView,
  SavedFile,
  SessionSearchResult,
  SessionSummary,
  SettingsView,
  ShareLinkView,
} from "../../../server/protocol";
import { startTestBridge, type TestBridge } from "../helpers";

/**
 * The UI's `api()` rejects an answer that does not fit the protocol's schema for it
 * (components/transport/client.ts). Each answer the pages ask for is parsed here with the schema the
 * page passes, so a route and its schema cannot drift apart unnoticed.
 */
let bridge: TestBridge;
let sessionId: string;

beforeAll(async () => {
  bridge = await startTestBridge();
  await fs.writeFile(path.join(bridge.workspace, "hello.txt"), "hello\n");
});
afterAll(() => bridge?.stop());

async function answer<S extends z.ZodType>(
  schema: S,
  pathname: string,
  init?: { method?: string; body?: unknown },
): Promise<z.infer<S>> {
  const response = await bridge.api(pathname, init);
  const text = await response.text();
  expect(response.ok, `${init?.method ?? "GET"} ${pathname}: ${response.status} ${text}`).toBe(true);
  const parsed = schema.safeParse(JSON.parse(text));
  expect(parsed.error, `${init?.method ?? "GET"} ${pathname}`).toBeUndefined();
  return parsed.data as z.infer<S>;
}

describe("the answers the UI parses", () => {
  it("fit the protocol's schemas, session routes first", async () => {
    const created = await answer(SessionSummary, "/api/v1/sessions", { body: { workspace: bridge.workspace } });
    sessionId = created.id;
    const session = `/api/v1/sessions/${sessionId}`;
    await answer(z.array(SessionSummary), "/api/v1/sessions");
    await answer(SessionSummary, session);
    await answer(SessionSummary, session, { method: "PATCH", body: { title: "Checked" } });
    await answer(z.array(CheckpointView), `${session}/checkpoints`);
    await answer(CheckpointSettings, `${session}/checkpoint-settings`);
    await answer(FileTreeListing, `${session}/files/tree?dir=`);
    await answer(GitStatus, `${session}/files/git`);
    const content = await answer(FileContent, `${session}/files/content?path=hello.txt`);
    await answer(SavedFile, `${session}/files/content`, {
      method: "PUT",
      body: { path: "hello.txt", content: "hello again\n", baseHash: content.hash },
    });
    await answer(FileSearchResult, `${session}/files/search?limit=12&q=hel`);
    await answer(McpStatusView, `${session}/mcp`);
    const link = await answer(CreatedShareLink, `${session}/share-links`, {
      body: { scope: "view", expires_in: 3600 },
    });
    await answer(z.array(ShareLinkView), `${session}/share-links`);
    await answer(ShareLinkView, `${session}/share-links/${link.id}`, { method: "DELETE" });
  });

  it("fit the protocol's schemas, app-wide routes", async () => {
    await answer(AccessView, "/api/v1/access");
    await answer(SettingsView, "/api/v1/settings");
    await answer(PricesView, "/api/v1/settings/prices");
    await answer(LayoutAnswer, "/api/v1/settings/layout");
    await answer(LayoutAnswer, "/api/v1/settings/layout", {
      method: "PUT",
      body: { treeWidth: 240, agentWidth: 480, bottomHeight: 200, treeOpen: true, bottomOpen: false },
    });
    await answer(RecentWorkspaces, "/api/v1/workspaces/recent");
    await answer(SessionSearchResult, "/api/v1/sessions-search?q=Checked");
    await answer(DirectoryListing, `/api/v1/fs/directories?path=${encodeURIComponent(bridge.workspace)}`);
    await answer(z.array(ApprovalView), "/api/v1/approvals?status=decided&limit=200");
    const rule = await answer(RuleView, "/api/v1/rules", {
      body: { tool: "shell", pattern: "ls*", action: "allow", scope: "global" },
    });
    await answer(z.array(RuleView), "/api/v1/rules");
    await answer(Deleted, `/api/v1/rules/${rule.id}`, { method: "DELETE" });
    await answer(MemorySettings, "/api/v1/memory/settings");
    const memory = await answer(MemoryView, "/api/v1/memory", {
      body: { text: "The build uses npm.", scope: "global", importance: 3 },
    });
    await answer(z.array(MemoryView), "/api/v1/memory?");
    await answer(Deleted, `/api/v1/memory/${encodeURIComponent(memory.id)}`, { method: "DELETE" });
    await answer(Deleted, `/api/v1/sessions/${sessionId}`, { method: "DELETE" });
  });
});
