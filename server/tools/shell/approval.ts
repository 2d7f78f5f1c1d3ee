import { localHost, type ResolvedPath, type WorkspaceHost } from "../../host";
import type { ApprovalNeed } from "../types";
import { classifyCommand, type ActionType } from "./classify";
import { parseShell } from "./parse";

const READ_ACTIONS: ActionType[] = ["read_only", "git_read", "package_check"];

/**
 * The approval need of a shell command. In this product every shell command
 * asks (yolo or an allow rule may approve it) except a small allowlist of
 * clearly read-only commands — ls, pwd, cat/head/tail/wc, echo, git
 * status/diff/log — written as one simple command (no chaining, pipes,
 * substitution, expansion or redirection) whose path arguments stay inside the
 * workspace and avoid sensitive files; those run without asking. Commands that
 * use sudo or other privileged programs, touch sensitive files, or write
 * outside the workspace are `always`: yolo never approves them.
 *
 * The scope that "allow for this session" records is the program and its
 * subcommand (`git status*`, `npm run test*`), never every shell command. A
 * compound command gets its exact text as scope and `compound: true`, so a
 * wildcard rule such as `git status*` must not approve `git status; rm -rf ~`.
 */
export async function shellApproval(
  command: string,
  workspace: string,
  host: Pick<WorkspaceHost, "resolve"> = localHost,
): Promise<ApprovalNeed> {
  const classification = await classifyCommand(command);
  const resolved = await Promise.all(
    // A path that cannot be resolved counts as outside the workspace: the call asks.
    classification.pathArgs.map((arg) => host.resolve(workspace, arg).catch((): ResolvedPath | undefined => undefined)),
  );
  const outside = resolved.filter((p) => !p || !p.inside);
  const sensitive = resolved.filter((p): p is ResolvedPath => Boolean(p?.sensitive));
  const readsOnly = READ_ACTIONS.includes(classification.actionType);

  let level: ApprovalNeed["level"] = "ask";
  const notes: string[] = [];
  if (classification.usesSudo || classification.actionType === "privileged") {
    level = "always";
    notes.push("privileged");
  } else if (sensitive.length > 0) {
    level = "always";
    notes.push(`touches a sensitive file (${sensitive.map((p) => p.display).join(", ")})`);
  } else if (outside.length > 0 && !readsOnly) {
    level = "always";
    notes.push("changes things outside the workspace");
  } else if (classification.allowlisted && outside.length === 0) {
    level = "none";
  }
  if (outside.length > 0 && readsOnly) notes.push("reads outside the workspace");

  const reasons = [...classification.reasons.filter((r) => r !== classification.prefix), ...notes];
  return {
    level,
    subject: command,
    scope: classification.simple ? `${classification.prefix}*` : command,
    compound: !classification.simple,
    description: `Run: ${command}${reasons.length > 0 ? ` (${reasons.join("; ")})` : ""}`,
    risk: level === "always" && classification.risk !== "high" ? "high" : classification.risk,
    actionType: classification.actionType,
    auditedCommand: command,
  };
}

/** Wrappers that may stand between the start of a command and `sudo`. */
const PREFIX_WRAPPERS = new Set(["env", "nice", "nohup", "time", "command", "exec"]);

/**
 * `sudo x` → `sudo -S -p '' x` wherever sudo starts a command, so it reads the
 * password from stdin without printing a prompt. sudo inside `bash -c '…'` is
 * not rewritten; it then fails for lack of a terminal rather than hanging.
 */
export async function rewriteSudo(command: string): Promise<string> {
  const insertAt: number[] = [];
  for (const simple of (await parseShell(command)).commands) {
    for (const word of simple.words) {
      if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(word.value) && !word.quoted) continue;
      if (word.value === "sudo" && !word.quoted) insertAt.push(word.end);
      if (!PREFIX_WRAPPERS.has(word.value)) break;
    }
  }
  let result = command;
  for (const at of insertAt.sort((a, b) => b - a)) result = `${result.slice(0, at)} -S -p ''${result.slice(at)}`;
  return result;
}
