/** ACP: `worldline acp` (Worldline as an agent) and print mode's turn driver. */
export { createAcpAgent } from "./agent";
export { mcpConfigs, type AcpServices } from "./sessions";
export { describeToolCall } from "./describe";
export { decisionFor, type ApprovalsPort } from "./permissions";
export { promptImages, promptText } from "./prompt";
export { driveTurn, errorLine, isRetryableError, type TurnSummary } from "./turn";
export { UpdateTranslator } from "./updates";
