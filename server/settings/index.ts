export { SettingsService, TEST_CONNECTION_TIMEOUT_MS } from "./service";
export type { ResolvedModel } from "./service";
export { keyHint } from "./keys";
