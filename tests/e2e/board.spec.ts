import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type { Locator, Page } from "@playwright/test";
import { BoardPage } from "./pages/board-page";
import { bridgeApi, e2e, expect, login, scriptLlm, test } from "./fixtures";
import { git, makeRepo } from "./fleet-repo";

/**
 * A fleet from the board, in real git: three agents on one prompt, each in its own
 * worktree; an approval decided on a card; cards moving from running to review; a commit merged
 * (squash) into the base; a branch pushed to a bare remote; a conflict the agent is asked to
 * resolve; a worktree archived with uncommitted and untracked files and restored byte for byte.
 * The user's own checkout changes only through the merges.
 */

const PROMPT = "Write shared.txt";
/** Before each turn's first token: long enough for the board to show the card running. */
const THINK_MS = 1_500;

interface SessionJson {
  id: string;
  title: string;
  state: string;
  worktree: { path: string; branch: string; base: string; repo: string } | null;
}

/** Every file of a folder (outside `.git`) with its bytes, to compare two moments byte for byte. */
async function snapshot(dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const entry of await fs.readdir(dir, { recursive: true, withFileTypes: true })) {
    const full = path.join(entry.parentPath, entry.name);
    const relative = path.relative(dir, full);
    if (!entry.isFile() || relative.split(path.sep)[0] === ".git") continue;
    files.set(relative, (await fs.readFile(full)).toString("base64"));
  }
  return files;
}

async function openDialog(card: Locator, page: Page, action: string): Promise<Locator> {
  await card.getByTestId(`card-${action}`).click();
  const dialog = page.getByTestId(`${action}-dialog`);
  await expect(dialog).toBeVisible();
  return dialog;
}

async function commit(page: Page, card: Locator, message: string): Promise<void> {
  const dialog = await openDialog(card, page, "commit");
  await dialog.getByTestId("commit-message").fill(message);
  await dialog.getByTestId("commit-submit").click();
  await expect(dialog.getByTestId("commit-result")).toBeVisible({ timeout: 30_000 });
  await page.keyboard.press("Escape");
  await expect(dialog).toHaveCount(0);
}

test("three agents from the board: approve, review, commit, merge, push, resolve a conflict, archive and restore", async ({
  page,
}) => {
  test.setTimeout(360_000);
  const { repo, remote } = await makeRepo();
  const firstMain = git(repo, "rev-parse", "main");
  const contents = ["one\n", "two\n", "three\n"];
  await scriptLlm(
    ...contents.map((content) => ({
      firstChunkDelayMs: THINK_MS,
      toolCalls: [{ name: "write_file", arguments: { path: "shared.txt", content } }],
    })),
    ...contents.map(() => ({ firstChunkDelayMs: THINK_MS, text: "Wrote shared.txt." })),
  );

  await login(page);
  const board = new BoardPage(page);
  await board.goto(e2e.baseUrl);
  await board.recordStates();

  // (1) Three agents on one prompt, each in its own worktree on its own branch, none inside the repository.
  await board.startAgents(PROMPT, repo, 3);
  await expect(board.cardsTitled(PROMPT)).toHaveCount(3, { timeout: 30_000 });
  const all = await bridgeApi<SessionJson[]>("/api/v1/sessions");
  const agents = all
    .filter((row) => row.title.startsWith(`${PROMPT} (`))
    .sort((a, b) => a.title.localeCompare(b.title));
  expect(agents.map((row) => row.title)).toEqual([1, 2, 3].map((n) => `${PROMPT} (${n})`));
  const worktrees = agents.map((row) => row.worktree!);
  expect(new Set(worktrees.map((worktree) => worktree.path)).size).toBe(3);
  expect(new Set(worktrees.map((worktree) => worktree.branch)).size).toBe(3);
  for (const worktree of worktrees) {
    expect(worktree.branch).toMatch(/^worldline\//);
    expect(worktree.base).toBe("main");
    expect(path.relative(repo, worktree.path).startsWith("..")).toBe(true);
    await expect(board.card(agents[0].id).getByTestId("card-branch")).toBeVisible();
  }

  // (2) Each waits for its write; each is allowed from its card.
  for (const agent of agents) {
    const card = board.card(agent.id);
    await expect(card).toHaveAttribute("data-state", "needs_you", { timeout: 30_000 });
    await expect(card.getByTestId("card-approval")).toContainText("write_file");
  }
  for (const agent of agents) await board.card(agent.id).getByTestId("card-allow").click();

  // (3) Running, then review, with the diff stat on the card.
  for (const agent of agents) {
    const card = board.card(agent.id);
    await expect(card).toHaveAttribute("data-state", "review", { timeout: 30_000 });
    await expect(card.getByTestId("card-changes")).toContainText("+1");
    await expect(card.getByTestId("card-changes")).toContainText("1 file");
    const states = await board.states(agent.id);
    expect(states, `states of ${agent.title}`).toContain("running");
    expect(states.indexOf("running")).toBeLessThan(states.lastIndexOf("review"));
  }
  // Which agent wrote what (the fake model answered whichever asked first).
  const wrote = await Promise.all(
    worktrees.map((worktree) => fs.readFile(path.join(worktree.path, "shared.txt"), "utf8")),
  );
  expect([...wrote].sort()).toEqual([...contents].sort());
  expect(await fs.readdir(repo)).toEqual(expect.not.arrayContaining(["shared.txt"]));
  const [merged, pushed, conflicted] = agents.map((agent) => board.card(agent.id));

  // (4) Commit the first (author from the repository's config), merge it squashed: main advances by one commit.
  await commit(page, merged, "Add shared.txt (first agent)");
  expect(git(worktrees[0].path, "log", "-1", "--format=%s|%an")).toBe("Add shared.txt (first agent)|Fleet Tester");
  const mergeDialog = await openDialog(merged, page, "merge");
  await expect(mergeDialog.getByTestId("merge-squash")).toBeChecked();
  await mergeDialog.getByTestId("merge-submit").click();
  await expect(mergeDialog.getByTestId("merge-result")).toBeVisible({ timeout: 30_000 });
  await page.keyboard.press("Escape");
  const secondMain = git(repo, "rev-parse", "main");
  expect(secondMain).not.toBe(firstMain);
  expect(git(repo, "rev-parse", "main^")).toBe(firstMain);
  expect(git(repo, "rev-list", "--count", "main")).toBe("2");
  expect(git(repo, "show", "main:shared.txt")).toBe(wrote[0].trim());
  // The checkout has main checked out: its files follow the merge, and nothing else changed.
  expect(await fs.readFile(path.join(repo, "shared.txt"), "utf8")).toBe(wrote[0]);
  expect(git(repo, "status", "--porcelain")).toBe("");
  await expect(merged).toHaveAttribute("data-state", "idle", { timeout: 30_000 });

  // (5) Commit the second with the message the model writes, and push it to the bare remote.
  await scriptLlm({ text: "Write shared.txt with the second agent's text" });
  await commit(page, pushed, "");
  expect(git(worktrees[1].path, "log", "-1", "--format=%s")).toBe("Write shared.txt with the second agent's text");
  const pushDialog = await openDialog(pushed, page, "push");
  await pushDialog.getByTestId("push-submit").click();
  await expect(pushDialog.getByTestId("push-result")).toContainText(worktrees[1].branch, { timeout: 30_000 });
  await expect(pushDialog.getByTestId("push-compare")).toHaveCount(0); // a folder remote has no pull requests
  await page.keyboard.press("Escape");
  expect(git(remote, "rev-parse", `refs/heads/${worktrees[1].branch}`)).toBe(
    git(worktrees[1].path, "rev-parse", "HEAD"),
  );

  // (6) The third conflicts with what was merged: main is left exactly as it was; the agent resolves it.
  await commit(page, conflicted, "Add shared.txt (third agent)");
  const conflictDialog = await openDialog(conflicted, page, "merge");
  await conflictDialog.getByTestId("merge-submit").click();
  await expect(conflictDialog.getByTestId("conflict-path")).toHaveText(["shared.txt"], { timeout: 30_000 });
  expect(git(repo, "rev-parse", "main")).toBe(secondMain);
  expect(git(repo, "status", "--porcelain")).toBe("");
  expect(await fs.readFile(path.join(repo, "shared.txt"), "utf8")).toBe(wrote[0]);
  const resolved = `${wrote[0].trim()} and ${wrote[2].trim()}\n`;
  await scriptLlm(
    { toolCalls: [{ name: "write_file", arguments: { path: "shared.txt", content: resolved } }] },
    { toolCalls: [{ name: "shell", arguments: { command: "git add shared.txt && git commit -q --no-edit" } }] },
    { text: "Resolved: both lines kept." },
  );
  await conflictDialog.getByTestId("resolve-conflict").click();
  await expect(conflictDialog.getByTestId("resolve-asked")).toBeVisible({ timeout: 30_000 });
  await page.keyboard.press("Escape");
  const asked = (await (await fetch(new URL("/__admin/requests", e2e.fakeUrl))).json()) as {
    body: { messages: { role: string; content: unknown }[] };
  }[];
  expect(JSON.stringify(asked.at(-1)?.body.messages.at(-1)?.content)).toContain("shared.txt");
  for (let approval = 0; approval < 2; approval++) {
    await expect(conflicted.getByTestId("card-approval")).toBeVisible({ timeout: 30_000 });
    await conflicted.getByTestId("card-allow").click();
    await expect(conflicted.getByTestId("card-allow")).toHaveCount(0);
  }
  await expect(conflicted).toHaveAttribute("data-state", "review", { timeout: 30_000 });
  expect(await fs.readFile(path.join(worktrees[2].path, "shared.txt"), "utf8")).toBe(resolved);
  expect(git(worktrees[2].path, "status", "--porcelain")).toBe("");
  const again = await openDialog(conflicted, page, "merge");
  await again.getByTestId("merge-submit").click();
  await expect(again.getByTestId("merge-result")).toBeVisible({ timeout: 30_000 });
  await page.keyboard.press("Escape");
  expect(git(repo, "rev-parse", "main^")).toBe(secondMain);
  expect(await fs.readFile(path.join(repo, "shared.txt"), "utf8")).toBe(resolved);

  // (7) Archive the pushed one with uncommitted and untracked work: refused with what would be lost, then forced.
  const kept = worktrees[1].path;
  await fs.writeFile(path.join(kept, "shared.txt"), "changed after the push\n");
  await fs.mkdir(path.join(kept, "scratch"), { recursive: true });
  await fs.writeFile(path.join(kept, "scratch", "blob.bin"), randomBytes(4096));
  await fs.writeFile(path.join(kept, "notes.txt"), "untracked notes\r\nwith a CRLF\n");
  const before = await snapshot(kept);
  const statusBefore = git(kept, "status", "--porcelain");
  const archiveDialog = await openDialog(pushed, page, "archive");
  await archiveDialog.getByTestId("archive-submit").click();
  const lost = archiveDialog.getByTestId("archive-lost");
  await expect(lost).toContainText("shared.txt", { timeout: 30_000 });
  await expect(lost).toContainText("notes.txt");
  await archiveDialog.getByTestId("archive-force").click();
  await expect(archiveDialog.getByTestId("archive-result")).toBeVisible({ timeout: 30_000 });
  await page.keyboard.press("Escape");
  await expect(pushed).toHaveCount(0);
  await expect(fs.stat(kept)).rejects.toThrow();
  expect(git(repo, "rev-parse", "--verify", `refs/heads/${worktrees[1].branch}`)).toMatch(/^[0-9a-f]{40}$/);

  await page.getByTestId("board-show-archived").check();
  await expect(pushed).toHaveAttribute("data-state", "archived");
  await pushed.getByTestId("card-restore").click();
  await expect(pushed).not.toHaveAttribute("data-state", "archived", { timeout: 30_000 });
  expect(await snapshot(kept)).toEqual(before);
  expect(git(kept, "status", "--porcelain")).toBe(statusBefore);

  // The user's checkout: main checked out, clean, holding exactly what the two merges brought.
  expect(git(repo, "rev-parse", "--abbrev-ref", "HEAD")).toBe("main");
  expect(git(repo, "status", "--porcelain", "--ignored")).toBe("");
  expect([...(await snapshot(repo)).keys()].sort()).toEqual(["README.md", "shared.txt"]);
});
