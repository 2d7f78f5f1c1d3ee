/** ACP: `worldline acp` (Worldline as an agent) and print mode's turn driver. */
export { createAcpAgent, acpMcpServers, mcpConfigs, type AcpServices } from "./agent";
export { ClientTools } from "./client-tools";
export { describeToolCall, diffContent } from "./describe";
export { decisionFor, PERMISSION_OPTIONS, type ApprovalsPort } from "./permissions";
export { promptImages, promptText } from "./prompt";
export { driveTurn, errorLine, isRetryableError, type TurnSummary, type TurnUsage } from "./turn";
export { UpdateTranslator } from "./updates";
export { ExternalAgents } from "./external";
