import type { BrowserSessions } from "../preview";
import { createBrowserTool } from "./browser";
import type { Tool } from "./define";
import { fetchUrlTool } from "./fetch-url";
import { globTool } from "./glob";
import { createGrepTool, type GrepToolOptions } from "./grep";
import { listDirTool } from "./list-dir";
import { readFileTool } from "./read-file";
import { createShellTool, type ShellToolOptions } from "./shell/shell-tool";
import { createTaskOutputTool, createTaskStopTool } from "./shell/task-tools";
import { sharedTaskRegistry } from "./shell/tasks";
import { strReplaceTool } from "./str-replace";
import { writeFileTool } from "./write-file";

export interface BuiltinToolOptions {
  shell?: ShellToolOptions;
  grep?: GrepToolOptions;
  /** The bridge's Chromium: with it, the `browser` tool (server/preview). */
  browser?: BrowserSessions;
}

/**
 * The workspace tools every session gets. Background tasks live in one
 * registry shared by shell, task_output and task_stop (the bridge-wide one
 * unless `shell.tasks` is given), so calling this once per turn is fine.
 */
export function builtinTools(options: BuiltinToolOptions = {}): Tool[] {
  const tasks = options.shell?.tasks ?? sharedTaskRegistry;
  return [
    readFileTool,
    writeFileTool,
    strReplaceTool,
    listDirTool,
    globTool,
    createGrepTool(options.grep),
    fetchUrlTool,
    createShellTool({ ...options.shell, tasks }),
    createTaskOutputTool(tasks),
    createTaskStopTool(tasks),
    ...(options.browser ? [createBrowserTool(options.browser)] : []),
  ];
}
