export { SettingsService, TEST_CONNECTION_TIMEOUT_MS } from "./service";
export type { ResolvedModel } from "./service";
export { PROVIDER_PRESETS } from "./presets";
export { keyHint } from "./keys";
