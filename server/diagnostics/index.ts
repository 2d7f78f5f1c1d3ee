/** Language-server diagnostics after the agent's edits (DESIGN.md §19). */
export { DiagnosticsService, EDIT_WAIT_LIMIT_MS, type ServerStatus } from "./service";
