import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { AuditRecord, ToolContext, ToolProgress } from "../../../server/tools/types";

/** A real temp folder (realpath'd, as the bridge gives tools) with a sibling for "outside" cases. */
export async function makeWorkspace(): Promise<{
  root: string;
  ws: string;
  outside: string;
  cleanup: () => Promise<void>;
}> {
  const root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-tools-")));
  const ws = path.join(root, "ws");
  const outside = path.join(root, "outside");
  await fs.mkdir(ws);
  await fs.mkdir(outside);
  return { root, ws, outside, cleanup: () => fs.rm(root, { recursive: true, force: true }) };
}

export interface FakeContext extends ToolContext {
  progress: ToolProgress[];
  audits: AuditRecord[];
  passwordPrompts: string[];
}

export function fakeCtx(cwd: string, overrides: Partial<ToolContext> & { password?: string | null } = {}): FakeContext {
  const progress: ToolProgress[] = [];
  const audits: AuditRecord[] = [];
  const passwordPrompts: string[] = [];
  const { password, ...rest } = overrides;
  return {
    cwd,
    signal: new AbortController().signal,
    sessionId: "s",
    toolCallId: "t",
    emit(event) {
      progress.push(event);
    },
    audit: async (record) => {
      audits.push(record);
    },
    askPassword:
      password === undefined
        ? undefined
        : async (prompt) => {
            passwordPrompts.push(prompt);
            return password;
          },
    progress,
    audits,
    passwordPrompts,
    ...rest,
  };
}

export async function write(file: string, content: string | Buffer): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, content);
}
