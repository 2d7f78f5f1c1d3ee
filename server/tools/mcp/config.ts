import { promises as fs } from "node:fs";
import * as z from "zod";

const StdioServerConfig = z.object({
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().optional(),
});

const HttpServerConfig = z.object({
  url: z.string().url(),
  headers: z.record(z.string(), z.string()).optional(),
});

export const McpServerConfig = z.union([StdioServerConfig, HttpServerConfig]);
export type McpServerConfig = z.infer<typeof McpServerConfig>;

export const McpConfigFile = z.object({ mcpServers: z.record(z.string(), z.unknown()).default({}) });

export interface LoadedMcpConfig {
  servers: Record<string, McpServerConfig>;
  /** Problems with files or entries, each naming the file; the rest still loads. */
  errors: string[];
}

/**
 * Reads `{ mcpServers: { name: { command, args?, env? } | { url, headers? } } }`
 * from each path in order (typically `$WORLDLINE_HOME/mcp.json`, then
 * `<workspace>/.worldline/mcp.json`); a later file's server replaces an earlier
 * one of the same name. Missing files are fine; broken ones are reported.
 */
export async function loadMcpConfig(
  paths: readonly string[],
  /** How a file is read (a runner's host for its workspace); undefined: it is not there. */
  read: (file: string) => Promise<string | undefined> = readLocal,
): Promise<LoadedMcpConfig> {
  const result: LoadedMcpConfig = { servers: {}, errors: [] };
  for (const file of paths) {
    let text: string | undefined;
    try {
      text = await read(file);
    } catch (error) {
      result.errors.push(`${file}: ${(error as Error).message}`);
      continue;
    }
    if (text === undefined) continue;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      result.errors.push(`${file}: not valid JSON (${(error as Error).message})`);
      continue;
    }
    const parsed = McpConfigFile.safeParse(json);
    if (!parsed.success) {
      result.errors.push(`${file}: expected { "mcpServers": { … } }`);
      continue;
    }
    for (const [name, entry] of Object.entries(parsed.data.mcpServers)) {
      const server = McpServerConfig.safeParse(entry);
      if (server.success) result.servers[name] = server.data;
      else result.errors.push(`${file}: server "${name}" needs either "command" (stdio) or "url" (streamable HTTP)`);
    }
  }
  return result;
}

async function readLocal(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}
