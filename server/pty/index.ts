export { PtyManager } from "./manager";
export type { TerminalInfo } from "./manager";
export type { Terminal, ViewerSink } from "./terminal";
export type { ScreenSnapshot } from "./mirror";
export { FlowControl } from "./flow-control";
