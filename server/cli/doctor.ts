import { loadConfig } from "../config";
import * as store from "../store";
import { checkDatabaseModules } from "./native";
import { checkWorktrees } from "../worktrees";

/**
 * `worldline doctor`: checks the stored sessions (server/store/consistency.ts), repairs what has
 * one right answer and lists the rest. Exit 0 when nothing is left unrepaired, 1 otherwise.
 */
export async function doctorCommand(): Promise<number> {
  const config = loadConfig(process.env);
  checkDatabaseModules(config.databaseUrl);
  const { db, provider } = await store.openDb(config.home, config.databaseUrl);
  try {
    const findings = await store.checkConsistency(db, { fix: true });
    process.stdout.write(`Checked the ${provider} database.\n`);
    for (const finding of findings) {
      process.stdout.write(
        `${finding.fixed ? "repaired" : "FOUND   "} ${finding.kind} in session ${finding.sessionId}: ${finding.detail}\n`,
      );
    }
    // Worktree sessions whose folder vanished or whose link to the repository broke (server/worktrees).
    const worktrees = await checkWorktrees(db, { fix: true });
    for (const finding of worktrees) {
      process.stdout.write(
        `${finding.fixed ? "repaired" : "FOUND   "} ${finding.kind} in session ${finding.sessionId}: ${finding.detail}\n`,
      );
    }
    const left = [...findings, ...worktrees].filter((finding) => !finding.fixed).length;
    process.stdout.write(
      left === 0 ? "No inconsistency left.\n" : `${left} inconsistencies need a look (see above).\n`,
    );
    return left === 0 ? 0 : 1;
  } finally {
    await db.$disconnect();
  }
}
