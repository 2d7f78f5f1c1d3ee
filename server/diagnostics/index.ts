/** Language-server diagnostics after the agent's edits (DESIGN.md §19). */
export { DiagnosticsService } from "./service";
