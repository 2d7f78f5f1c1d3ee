/**
 * Worldline as an ACP client: sessions whose `agentCommand` names an external agent (Claude Code,
 * opencode, …) run their turns on it. Apart from server/acp (Worldline as an ACP agent) so that
 * `worldline serve` loads neither side's SDK until a session needs it.
 */
export { ExternalAgents } from "./agents";
