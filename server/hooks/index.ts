/** Lifecycle hooks: a team's hooks files run at the loop's events, once trusted. */
export { HookService } from "./service";
export { matchesTool, parseHooksFile } from "./config";
