import type { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { StdioProcess, StdioSpec, WorkspaceHost } from "../../host";

/** The SDK's line framing, from the lazily loaded SDK (manager.ts loadSdk). */
export interface StdioFraming {
  ReadBuffer: typeof ReadBuffer;
  serializeMessage: typeof serializeMessage;
}

/**
 * An MCP stdio transport whose server runs where the session's workspace is: started through
 * the host's stdio channel (`spawnStdio`, a runner's machine for a session there), with the
 * SDK's own newline-delimited JSON framing. Closing it ends the server through the host's kill path.
 */
export class HostStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private process: StdioProcess | undefined;

  constructor(
    private readonly host: Pick<WorkspaceHost, "spawnStdio">,
    private readonly spec: Pick<StdioSpec, "command" | "args" | "cwd" | "env">,
    private readonly framing: StdioFraming,
    private readonly onStderr: (chunk: string) => void,
  ) {}

  async start(): Promise<void> {
    const buffer = new this.framing.ReadBuffer();
    this.process = await this.host.spawnStdio({
      ...this.spec,
      // The MCP SDK's rule on every host: HOME, PATH and the like, plus the server's own `env`.
      inherit: "basic",
      onStdout: (chunk) => {
        try {
          buffer.append(Buffer.from(chunk, "utf8"));
        } catch (error) {
          return this.onerror?.(error as Error); // a line over the SDK's limit; the buffer starts over
        }
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = buffer.readMessage();
          } catch (error) {
            // A line that is not JSON-RPC: reported, and the next line is read.
            this.onerror?.(error as Error);
            continue;
          }
          if (!message) break;
          this.onmessage?.(message);
        }
      },
      onStderr: this.onStderr,
      onExit: () => this.onclose?.(),
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.process?.write(this.framing.serializeMessage(message));
  }

  async close(): Promise<void> {
    await this.process?.stop();
  }
}
