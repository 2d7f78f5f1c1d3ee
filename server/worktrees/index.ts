/**
 * Worktree sessions: each in its own `git worktree` on a branch `worldline/<slug>`,
 * under WORLDLINE_HOME; their setup, diff stat, commit, merge, push, archive, restore and doctor.
 * See README.md.
 */
export { Worktrees } from "./worktrees";
export { checkWorktrees } from "./doctor";
export { compareUrl } from "./push";
