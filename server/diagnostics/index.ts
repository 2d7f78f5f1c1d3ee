/** Language-server diagnostics after the agent's edits. */
export { DiagnosticsService } from "./service";
