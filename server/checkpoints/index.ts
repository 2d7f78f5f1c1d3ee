/**
 * Workspace checkpoints: snapshots in a shadow git repository per workspace, diffs between
 * them, restore (rewind) with conflict detection, and materializing a snapshot elsewhere
 * (fork). See shadow-repo.ts for the model and stage.ts for how nested repositories and
 * size limits are handled.
 */
export { openShadowRepo, ShadowRepo } from "./shadow-repo.ts";
export { defaultHome, shadowGitDir } from "./layout.ts";
export { CheckpointService } from "./service.ts";
export { LocalShadowRepos } from "./local-repos.ts";
export { runThroughHelper } from "./git-helper.ts";
