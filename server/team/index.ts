export { relayCredentials } from "./credentials";
export { Rpc } from "./rpc";
export { TerminalRouter } from "./terminals";
export { TurnRouter } from "./turns";
