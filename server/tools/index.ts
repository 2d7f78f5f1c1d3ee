/** Workspace tools: what the agent can do, what each call needs approved, and MCP. */
export { defineTool, truncateOutput, MAX_TOOL_OUTPUT_CHARS, type Tool, type DefineToolOptions } from "./define";
export { builtinTools, type BuiltinToolOptions } from "./builtin";
export {
  resolveInWorkspace,
  isWithin,
  sensitiveReason,
  pathApproval,
  writeResolvedFile,
  type ResolvedPath,
} from "./paths";
export { classifyCommand, type ActionType, type CommandClassification } from "./shell/classify";
export { shellApproval } from "./shell/approval";
export { auditCommand } from "./shell/audit";
export {
  createShellTool,
  DEFAULT_SHELL_TIMEOUT_MS,
  MAX_SHELL_TIMEOUT_MS,
  type ShellToolOptions,
} from "./shell/shell-tool";
export { TaskRegistry, sharedTaskRegistry } from "./shell/tasks";
export { createGrepTool, type GrepToolOptions } from "./grep";
export { unifiedDiff } from "./diff";
export {
  createMcpManager,
  mcpToolName,
  type McpManager,
  type McpManagerOptions,
  type McpServerStatus,
  type McpServerState,
} from "./mcp/manager";
export { loadMcpConfig, type LoadedMcpConfig, type McpServerConfig } from "./mcp/config";
export type {
  ApprovalNeed,
  ApprovalDecision,
  AuditRecord,
  RiskLevel,
  ToolContext,
  ToolDefinition,
  ToolProgress,
  ToolResult,
} from "./types";
export {
  SessionMcp,
  type SessionMcpOptions,
  type SessionMcpServer,
  type SessionMcpStatus,
  type McpServerSource,
} from "./mcp/sessions";
