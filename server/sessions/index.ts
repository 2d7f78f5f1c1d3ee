export { EventLog } from "./event-log";
export { Sessions } from "./service";
export { SessionJanitor } from "./janitor";
export type { Session } from "./service";
export { listDirectories, resolveWorkspacePath } from "./workspace-path";
export { SnapshotCache, SNAPSHOT_MIN_EVENTS } from "./snapshots";
export { WorkspacePlacement } from "./placement";
