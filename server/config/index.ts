export { loadConfig, isLoopbackHost } from "./env";
export type { BridgeConfig, ModelConfig, ReasoningHistory } from "./env";
export { PACKAGED, ROOT_DIR } from "./root";
export { makeHome } from "./home";
export { ProtectedHome } from "./protected-home";
