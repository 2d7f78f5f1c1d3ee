import type { WorkspaceHost } from "../host";
import type { AgentTool } from "./tools-port";
import type { TurnEmitter } from "./turn-emitter";

/** What a source of per-session tools is told at the start of each turn. */
export interface SessionToolsInput {
  sessionId: string;
  workspace: string;
  /** For notices about the tools (an MCP server that failed to start) in this turn. */
  emit: TurnEmitter;
  signal: AbortSignal;
  /** The tools so far (workspace tools and earlier layers), for a layer that wraps some of them. */
  tools: readonly AgentTool[];
  /** The session's runner host: its MCP stdio servers start there. Absent: this machine. */
  host?: WorkspaceHost;
}

/**
 * Tools that depend on the session: MCP servers of the workspace or of an ACP
 * client (server/tools/mcp), or a client's own file and terminal access
 * (server/acp). A tool with the name of a workspace tool replaces it.
 */
export interface SessionToolSource {
  tools(input: SessionToolsInput): Promise<AgentTool[]> | AgentTool[];
}

/**
 * The workspace tools with each layer applied in order: a tool replaces the
 * one of the same name (keeping its place), others are appended.
 */
export function layerTools(base: readonly AgentTool[], layers: readonly (readonly AgentTool[])[]): AgentTool[] {
  const result = base.slice();
  for (const layer of layers) {
    for (const tool of layer) {
      const at = result.findIndex((existing) => existing.name === tool.name);
      if (at === -1) result.push(tool);
      else result[at] = tool;
    }
  }
  return result;
}

/**
 * The tool list of a request, in an order that only changes at its end (a provider's prompt cache):
 * the workspace's own tools in their fixed order (a layer's replacement keeps the place), then the agent's
 * tools, then tools that layers add (MCP servers, an ACP client), which may come and go between turns.
 */
export function orderSessionTools(
  base: readonly AgentTool[],
  layered: readonly AgentTool[],
  agentTools: readonly AgentTool[],
): AgentTool[] {
  const baseNames = new Set(base.map((tool) => tool.name));
  return [
    ...layered.filter((tool) => baseNames.has(tool.name)),
    ...agentTools,
    ...layered.filter((tool) => !baseNames.has(tool.name)),
  ];
}
