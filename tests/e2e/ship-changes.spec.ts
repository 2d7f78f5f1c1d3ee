import fs from "node:fs/promises";
import path from "node:path";
import { SessionPage } from "./pages/session-page";
import { bridgeApi, e2e, expect, login, scriptLlm, test } from "./fixtures";
import { git, makeRepo } from "./fleet-repo";

/**
 * Shipping a worktree session's work from its own page: the Changes view's Commit (the model
 * writes the message, the user edits it), Merge (squash) and Push (to a bare remote), the same
 * dialogs a board card opens. The user's checkout changes only through the merge.
 */

interface Created {
  id: string;
}
interface SessionJson {
  worktree: { path: string; branch: string; base: string } | null;
}

test("Changes view: commit with the model's message edited, squash merge into main, push the branch", async ({
  page,
}) => {
  test.setTimeout(180_000);
  const { repo, remote } = await makeRepo();
  const firstMain = git(repo, "rev-parse", "main");
  const { id } = await bridgeApi<Created>("/api/v1/sessions", {
    workspace: repo,
    isolation: "worktree",
    yolo: true,
    title: "Ship from Changes",
  });
  const { worktree } = await bridgeApi<SessionJson>(`/api/v1/sessions/${id}`);
  expect(worktree?.base).toBe("main");
  const { path: folder, branch } = worktree!;

  await scriptLlm(
    { toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "shipped from Changes\n" } }] },
    { text: "Wrote notes.txt." },
  );
  await login(page);
  const session = new SessionPage(page);
  await session.goto(e2e.baseUrl, id);
  await session.send("Write notes.txt");
  await expect(session.assistantMessages().last()).toContainText("Wrote notes.txt.", { timeout: 30_000 });
  await page.getByTestId("toggle-changes").click();
  const changes = page.getByTestId("changes-view");
  await expect(changes.getByTestId("changes-file")).toHaveAttribute("data-path", "notes.txt");

  // Commit: the message field starts empty (the model writes it); here the user writes their own.
  await changes.getByTestId("changes-commit").click();
  const commitDialog = page.getByTestId("commit-dialog");
  await expect(commitDialog.getByTestId("commit-message")).toBeFocused();
  await commitDialog.getByTestId("commit-message").fill("Add notes.txt from the Changes view");
  await commitDialog.getByTestId("commit-submit").click();
  await expect(commitDialog.getByTestId("commit-result")).toContainText(branch, { timeout: 30_000 });
  await page.keyboard.press("Escape");
  await expect(commitDialog).toHaveCount(0);
  await expect(changes.getByTestId("changes-commit")).toBeFocused(); // focus comes back to the button
  expect(git(folder, "log", "-1", "--format=%s|%an")).toBe("Add notes.txt from the Changes view|Fleet Tester");
  expect(git(repo, "rev-parse", "main")).toBe(firstMain);

  // Merge, squashed: main advances by one commit holding the file, and the checkout follows.
  await changes.getByTestId("changes-merge").click();
  const mergeDialog = page.getByTestId("merge-dialog");
  await expect(mergeDialog.getByTestId("merge-squash")).toBeChecked();
  await mergeDialog.getByTestId("merge-submit").click();
  await expect(mergeDialog.getByTestId("merge-result")).toBeVisible({ timeout: 30_000 });
  await page.keyboard.press("Escape");
  expect(git(repo, "rev-parse", "main^")).toBe(firstMain);
  expect(git(repo, "show", "main:notes.txt")).toBe("shipped from Changes");
  expect(await fs.readFile(path.join(repo, "notes.txt"), "utf8")).toBe("shipped from Changes\n");
  expect(git(repo, "status", "--porcelain")).toBe("");

  // Push to the bare remote: the branch arrives there at the worktree's tip (a folder remote has no pull requests).
  await changes.getByTestId("changes-push").click();
  const pushDialog = page.getByTestId("push-dialog");
  await pushDialog.getByTestId("push-submit").click();
  await expect(pushDialog.getByTestId("push-result")).toContainText(branch, { timeout: 30_000 });
  await expect(pushDialog.getByTestId("push-compare")).toHaveCount(0);
  await page.keyboard.press("Escape");
  expect(git(remote, "rev-parse", `refs/heads/${branch}`)).toBe(git(folder, "rev-parse", "HEAD"));
});

test("Changes view of a session in place offers no shipping", async ({ page }) => {
  const { repo } = await makeRepo();
  const { id } = await bridgeApi<Created>("/api/v1/sessions", {
    workspace: repo,
    isolation: "none",
    title: "In place",
  });
  await login(page);
  const session = new SessionPage(page);
  await session.goto(e2e.baseUrl, id);
  await page.getByTestId("toggle-changes").click();
  await expect(page.getByTestId("changes-view")).toBeVisible();
  await expect(page.getByTestId("changes-commit")).toHaveCount(0);
});
