export { loadConfig, isLoopbackHost } from "./env";
export type { BridgeConfig, ModelConfig } from "./env";
export { ROOT_DIR } from "./root";
