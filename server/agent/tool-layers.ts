import type { WorkspaceHost } from "../host";
import { layerTools, type SessionToolSource } from "./session-tools";
import type { AgentTool } from "./tools-port";
import type { TurnEmitter } from "./turn-emitter";

/**
 * The tools of a session's turn: the workspace's, then the shared per-session source
 * (MCP servers, server/tools/mcp), then layers by owner (an ACP client's fs/terminal).
 */
export class ToolLayers {
  /** Per-session tool layers by owner, applied after the shared source. */
  private readonly layers = new Map<string, Map<string, SessionToolSource>>();

  constructor(
    private readonly workspaceTools: () => AgentTool[],
    private readonly shared?: SessionToolSource,
  ) {}

  /** Sets (or with `undefined` removes) the layer of `owner` for the session, from its next turn on. */
  set(sessionId: string, owner: string, source: SessionToolSource | undefined): void {
    let layers = this.layers.get(sessionId);
    if (!source) {
      layers?.delete(owner);
      if (layers?.size === 0) this.layers.delete(sessionId);
      return;
    }
    if (!layers) this.layers.set(sessionId, (layers = new Map()));
    layers.set(owner, source);
  }

  release(sessionId: string): void {
    this.layers.delete(sessionId);
  }

  /** Sessions with layers (tests bound it). */
  size(): number {
    return this.layers.size;
  }

  /** Workspace tools with the session's layers; a source that fails is skipped with a notice, never ending the turn. */
  async toolsFor(input: {
    sessionId: string;
    workspace: string;
    emit: TurnEmitter;
    signal: AbortSignal;
    /** A session on a runner: the shared source (MCP servers) starts its stdio servers there. */
    host?: WorkspaceHost;
  }): Promise<AgentTool[]> {
    const sources = [...(this.shared ? [this.shared] : []), ...(this.layers.get(input.sessionId)?.values() ?? [])];
    let tools = this.workspaceTools();
    for (const source of sources) {
      try {
        tools = layerTools(tools, [await source.tools({ ...input, tools })]);
      } catch (error) {
        const text = `Some tools are unavailable in this turn: ${error instanceof Error ? error.message : String(error)}`;
        input.emit.event({ type: "notice", payload: { level: "warning", text, turnId: input.emit.turnId } });
      }
    }
    return tools;
  }
}
