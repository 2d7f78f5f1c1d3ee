/** ACP: `worldline acp` (Worldline as an agent). Print mode drives its turn with turn.ts's `driveTurn` directly. */
export { createAcpAgent } from "./agent";
export { mcpConfigs, type AcpServices } from "./sessions";
export { describeToolCall } from "./describe";
export { decisionFor } from "./permissions";
export { promptImages, promptText } from "./prompt";
export { UpdateTranslator } from "./updates";
