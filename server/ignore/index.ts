export { SKIP_PATTERNS, isSkipped, skipGlobsForRipgrep } from "./skip-list";
export { WorkspaceIgnore } from "./workspace-ignore";
