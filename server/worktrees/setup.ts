import path from "node:path";
import * as z from "zod";
import { WorldlineError } from "../errors";
import type { GitHost } from "./git";

const ProjectConfig = z.object({ setup: z.string().min(1).max(10_000).optional() }).passthrough();

/**
 * The project's setup command for a new worktree: `.worldline/setup` when it is
 * executable, else `"setup"` in `.worldline/worldline.json`; null when the project has neither.
 * A `worldline.json` that is not valid JSON is an error the session shows, not a silent skip.
 */
export async function setupCommand(host: GitHost, worktree: string): Promise<string | null> {
  const script = path.join(worktree, ".worldline", "setup");
  // Absent or not executable: the JSON file may name a setup instead.
  const executable = await host.run({ cwd: worktree, argv: ["test", "-f", script, "-a", "-x", script] });
  if (executable.code === 0) return "./.worldline/setup";
  const text = await host.readText(path.join(worktree, ".worldline", "worldline.json"));
  if (text === undefined) return null; // absent: no setup
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new WorldlineError(
      "worktree:invalid",
      `.worldline/worldline.json is not valid JSON: ${(error as Error).message}`,
    );
  }
  const parsed = ProjectConfig.safeParse(json);
  if (!parsed.success)
    throw new WorldlineError(
      "worktree:invalid",
      `.worldline/worldline.json: "setup" must be a command line (a string).`,
    );
  return parsed.data.setup ?? null;
}
