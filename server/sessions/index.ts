export { EventLog } from "./event-log";
export { Sessions } from "./service";
export { SessionJanitor, SESSION_IDLE_RELEASE_MS, type SessionResource } from "./janitor";
export type { Session } from "./service";
export { listDirectories, resolveWorkspacePath } from "./workspace-path";
export { SnapshotCache, SNAPSHOT_MIN_EVENTS } from "./snapshots";
