export { localPtyOpener, PtyManager, shellEnv } from "./manager";
export type { TerminalInfo } from "./manager";
export type { Terminal, ViewerSink } from "./terminal";
export type { ScreenSnapshot } from "./mirror";
export { FlowControl } from "./flow-control";
export { openLocalPty, type PtyOpener, type PtyProcess, type PtySpawn } from "./pty-process";
export type { PtyReads } from "./spawn";
