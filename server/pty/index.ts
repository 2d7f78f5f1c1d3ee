export { PtyManager } from "./manager";
export type { PtyManagerEvents, PtyManagerOptions, TerminalInfo } from "./manager";
export type { Terminal, ViewerSink } from "./terminal";
export type { ScreenSnapshot } from "./mirror";
export { FlowControl } from "./flow-control";
export { processTree, killProcessTree } from "./process-tree";
export {
  HIGH_WATERMARK_BYTES,
  LOW_WATERMARK_BYTES,
  KILL_GRACE_MS,
  MAX_TERMINALS,
  MAX_TERMINALS_PER_SESSION,
} from "./limits";
