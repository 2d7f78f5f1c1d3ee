import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { ToolHost } from "../host";
import type { FileDiagnostic } from "../tools";
import type { ServerSpec } from "./language-server";

const require = createRequire(import.meta.url);

const TYPESCRIPT_IDS: Record<string, string> = {
  ".ts": "typescript",
  ".mts": "typescript",
  ".cts": "typescript",
  ".tsx": "typescriptreact",
  ".js": "javascript",
  ".mjs": "javascript",
  ".cjs": "javascript",
  ".jsx": "javascriptreact",
};

const PYTHON_IDS: Record<string, string> = { ".py": "python", ".pyi": "python" };

/** The language of a file a server handles, or undefined. */
export function languageOf(file: string): "typescript" | "python" | undefined {
  const extension = path.extname(file).toLowerCase();
  if (extension in TYPESCRIPT_IDS) return "typescript";
  if (extension in PYTHON_IDS) return "python";
  return undefined;
}

/**
 * How to start the language server for a language in a workspace, or why there is none:
 * typescript-language-server (a dependency of the product) with the workspace's own
 * TypeScript when it has one, the product's otherwise; pyright when it is installed.
 */
export async function serverSpec(
  language: "typescript" | "python",
  workspace: string,
  host: ToolHost,
): Promise<ServerSpec | { missing: string }> {
  if (language === "typescript") {
    const own = path.join(workspace, "node_modules/typescript/lib/tsserver.js");
    // On a runner, without the workspace's own TypeScript the server finds the one beside it in the runner's install.
    const tsserver = (await host.stat(own).catch(() => null))
      ? own
      : host.runner
        ? undefined
        : require.resolve("typescript/lib/tsserver.js");
    return {
      language,
      command: "typescript-language-server",
      args: ["--stdio"],
      bundled: "typescript-language-server",
      languageIds: TYPESCRIPT_IDS,
      initializationOptions: { ...(tsserver ? { tsserver: { path: tsserver } } : {}), preferences: {} },
      pull: tsserverErrors,
    };
  }
  // A runner's PATH is its own: it looks for pyright itself (missing, the server fails to start and says so).
  if (host.runner) return { language, command: "pyright-langserver", args: ["--stdio"], languageIds: PYTHON_IDS };
  const pyright = onPath("pyright-langserver");
  if (!pyright) return { missing: "pyright is not installed (pyright-langserver is not on PATH)" };
  return { language, command: pyright, args: ["--stdio"], languageIds: PYTHON_IDS };
}

function onPath(program: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, program);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

/** A diagnostic as tsserver's `*DiagnosticsSync` requests answer it (lines and offsets from 1). */
interface TsserverDiagnostic {
  start: { line: number; offset: number };
  text: string;
  code?: number;
  category?: string;
}

/**
 * The file's syntax and type errors now, asked of tsserver through typescript-language-server's
 * `typescript.tsserverRequest` command (it sends the edit to tsserver first: requests keep their order).
 */
async function tsserverErrors(
  request: (method: string, params: unknown) => Promise<unknown>,
  uri: string,
): Promise<FileDiagnostic[]> {
  const ask = async (command: string) => {
    const answer = (await request("workspace/executeCommand", {
      command: "typescript.tsserverRequest",
      arguments: [command, { file: uri }],
    })) as { body?: TsserverDiagnostic[] } | null;
    return answer?.body ?? [];
  };
  const found = [...(await ask("syntacticDiagnosticsSync")), ...(await ask("semanticDiagnosticsSync"))];
  return found
    .filter((diagnostic) => (diagnostic.category ?? "error") === "error")
    .map((diagnostic) => ({
      line: diagnostic.start.line,
      column: diagnostic.start.offset,
      message: diagnostic.text,
      source: "typescript",
      ...(diagnostic.code !== undefined ? { code: String(diagnostic.code) } : {}),
    }));
}
