/** Workspace tools: what the agent can do, what each call needs approved, and MCP. */
export { defineTool, MAX_TOOL_OUTPUT_CHARS, type Tool } from "./define";
export { builtinTools } from "./builtin";
export { pathApproval } from "./paths";
export { resolveInWorkspace, writeResolvedFile } from "../host";
export { classifyCommand } from "./shell/classify";
export { quoteForShell } from "./shell/classify-words";
export { shellApproval } from "./shell/approval";
export { auditCommand } from "./shell/audit";
export {
  createShellTool,
  DEFAULT_SHELL_TIMEOUT_MS,
  MAX_SHELL_TIMEOUT_MS,
  NON_INTERACTIVE_ENV,
} from "./shell/shell-tool";
export { READ_DEFAULT_LIMIT, READ_MAX_LINE_CHARS, READ_MAX_OUTPUT_CHARS } from "./read-file";
export { TaskRegistry, sharedTaskRegistry } from "./shell/tasks";
export { createGrepTool } from "./grep";
export { createMcpManager, mcpToolName, type McpManager } from "./mcp/manager";
export { loadMcpConfig, type McpServerConfig } from "./mcp/config";
export type { ApprovalNeed, FileDiagnostic, ToolContext, ToolResult } from "./types";
export { SessionMcp } from "./mcp/sessions";
