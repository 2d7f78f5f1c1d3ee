export { WorkspaceFiles } from "./service";
export { parsePorcelain } from "./git-status";
export { fuzzyFilter, fuzzyScore } from "./fuzzy";
