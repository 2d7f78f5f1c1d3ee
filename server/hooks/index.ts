/** Lifecycle hooks (DESIGN.md §19): a team's hooks files run at the loop's events, once trusted. */
export { HookService, type HookServiceDeps } from "./service";
export { HOOK_EVENTS, matchesTool, parseHooksFile, type HookEventName, type HooksFile } from "./config";
export { runHookCommand, HOOK_OUTPUT_CAP, type HookRunResult } from "./run";
