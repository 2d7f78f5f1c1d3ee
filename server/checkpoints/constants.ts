/**
 * Tunables and fixed names of the checkpoint engine. Every limit can be overridden per
 * repository through `ShadowRepoOptions`; these are the defaults.
 */

/** Files above this are not captured: past a few MiB a file is data or a build artifact, and hashing it every step would dominate snapshot time. */
export const DEFAULT_MAX_FILE_BYTES = 8 * 1024 * 1024;

/** New content one snapshot may hash into the shadow store; bounds the time and disk of a single step (the rest is captured by later snapshots). */
export const DEFAULT_MAX_SNAPSHOT_BYTES = 128 * 1024 * 1024;

/** Patches returned by `diff()` are cut here: a preview in the UI never needs more, and a huge patch would stall the socket. */
export const MAX_PATCH_CHARS = 2 * 1024 * 1024;

/** Nested repositories inside nested repositories: deeper than this is almost certainly a loop or a vendored mirror. */
export const MAX_NESTED_REPO_DEPTH = 8;

/** A lock file older than this was left by a crashed process (our own operations are serialized and take milliseconds). */
export const STALE_LOCK_MS = 10 * 60 * 1000;

/** Run `git gc --auto` every this many snapshots, so loose objects don't pile up in long sessions. */
export const GC_EVERY_SNAPSHOTS = 200;

/**
 * Written to `info/attributes`, which outranks the workspace's .gitattributes: snapshots
 * must store bytes exactly as they are on disk (no EOL conversion, no clean/smudge filters
 * such as git-lfs, no re-encoding), or a restore would not be exact.
 */
export const RAW_ATTRIBUTES = "* -text -eol -filter -ident -working-tree-encoding\n";

/** The branch whose history is the chain of snapshots; every snapshot stays reachable from it. */
export const SNAPSHOT_REF = "refs/heads/snapshots";

/** Placed in the shadow index inside a nested repository so git walks into it as a plain folder (see stage.ts). */
export const NESTED_REPO_PLACEHOLDER = ".worldline-nested-repo-placeholder";

/** The tree with no entries, in SHA-1 repositories. */
export const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/** Commit message trailer that records which paths a snapshot could not capture. */
export const SKIPPED_TRAILER = "Worldline-Skipped:";

/** Fixed identity: snapshots must not depend on, or leak, the user's git identity. */
export const SNAPSHOT_AUTHOR = { name: "Worldline", email: "snapshots@worldline.invalid" } as const;
