import type { RiskLevel } from "../types";
import { parseShell, type SimpleCommand, type Word } from "./parse";
import {
  RISK_ORDER,
  ACTION_ORDER,
  ALLOWLIST,
  READ_ONLY,
  PRIVILEGED,
  NETWORK,
  NETWORK_READ,
  FILE_WRITE,
  FILE_DELETE,
  PROCESS,
  EXECUTE,
  FILE_ARGUMENT_PROGRAMS,
  SHELLS,
  PACKAGE_MANAGERS,
  PACKAGE_INSTALL_SUBCOMMANDS,
  PACKAGE_CHECK_SUBCOMMANDS,
  GIT_READ,
  GIT_NETWORK,
  HARMLESS_TARGETS,
  type ActionType,
} from "./classify-tables";
import { commandPrefix, looksLikePath, programName, quoteForShell, unwrap } from "./classify-words";

export type { ActionType };

export interface CommandClassification {
  risk: RiskLevel;
  /** The most consequential action in the line. */
  actionType: ActionType;
  /** Why the risk is what it is, for the approval card. */
  reasons: string[];
  /** One command, no chaining, substitution, expansion or file redirection: wildcard approval scopes may match it. */
  simple: boolean;
  /** Simple and on the read-only allowlist; its path arguments still have to stay in the workspace. */
  allowlisted: boolean;
  /** `sudo` starts one of the top-level commands (the tool then asks for the password). */
  usesSudo: boolean;
  /** Program and subcommand of the first command, e.g. `git status`, `npm test`. */
  prefix: string;
  /** Arguments and redirect targets that look like paths, for the workspace check. */
  pathArgs: string[];
}

interface Verdict {
  risk: RiskLevel;
  action: ActionType;
  reasons: string[];
}

/** Async because a line that is not plain needs the bash grammar, which loads on first use. */
export function classifyCommand(command: string): Promise<CommandClassification> {
  return classifyLine(command, 0);
}

/** Assignments that change which program a later word runs, or what it loads. */
const SEARCH_PATH_ASSIGNMENT = /^(PATH|LD_PRELOAD|LD_LIBRARY_PATH|DYLD_\w+|BASH_ENV|ENV|PROMPT_COMMAND|IFS)=/;
/** Builtins that set or clear variables: `export X=1`, `local y`. */
const DECLARATIONS = new Set(["export", "unset", "local", "declare", "typeset", "readonly"]);

/** Nested scripts (`bash -c`, here-documents fed to a shell) are classified to this depth; deeper is treated as unknown and risky. */
const MAX_NESTING = 4;

async function classifyLine(command: string, depth: number): Promise<CommandClassification> {
  const parsed = await parseShell(command);
  const verdict: Verdict = { risk: "none", action: "read_only", reasons: [] };
  const pathArgs: string[] = [];
  let usesSudo = false;

  if (command.trim() === "") raise(verdict, "low", "unknown", "empty command");
  if (parsed.malformed) raise(verdict, "high", "unknown", "unbalanced quotes or parentheses");
  if (depth > MAX_NESTING) raise(verdict, "high", "unknown", "deeply nested shell");
  const chained = parsed.operators.filter((op) => op !== "(" && op !== ")");
  if (chained.length > 0)
    raise(verdict, "low", "read_only", `chains commands (${[...new Set(chained)].join(" ").replace("\n", "newline")})`);
  for (const construct of new Set(parsed.constructs)) raise(verdict, "low", "read_only", construct);
  // The commands inside substitutions are among parsed.commands; the substitution itself hides them from a reader.
  if (parsed.substitutions.length > 0) raise(verdict, "medium", "unknown", "command substitution");
  if (parsed.hasHeredoc) raise(verdict, "low", "read_only", "here-document");
  for (const inner of parsed.unparsedSubstitutions) merge(verdict, await classifyLine(inner, depth + 1));

  for (const simple of parsed.commands) {
    const result = await classifySimple(simple, depth);
    merge(verdict, result);
    pathArgs.push(...result.pathArgs);
    if (result.usesSudo) usesSudo = true;
  }

  const first = parsed.commands[0];
  const unwrapped = first ? unwrap(first.words) : { words: [] as Word[], wrappers: [] as string[] };
  const prefix = commandPrefix(unwrapped.words, unwrapped.wrappers);
  const expands = parsed.commands.some((c) => c.words.some((w) => w.expands));
  const writesFiles = parsed.commands.some((c) =>
    c.redirects.some((r) => !r.op.includes("<") && !HARMLESS_TARGETS.test(r.target)),
  );
  const simple =
    parsed.commands.length === 1 &&
    parsed.operators.length === 0 &&
    parsed.substitutions.length === 0 &&
    parsed.constructs.length === 0 &&
    !parsed.malformed &&
    !parsed.hasHeredoc &&
    !writesFiles &&
    !expands;
  const readOnly = verdict.action === "read_only" || verdict.action === "git_read";
  const allowlisted =
    simple &&
    readOnly &&
    unwrapped.wrappers.length === 0 &&
    ALLOWLIST.has(prefix) &&
    verdict.risk !== "high" &&
    (first?.redirects.length ?? 0) === 0;
  return {
    risk: verdict.risk,
    actionType: verdict.action,
    reasons: verdict.reasons,
    simple,
    allowlisted,
    usesSudo,
    prefix,
    pathArgs,
  };
}

async function classifySimple(
  command: SimpleCommand,
  depth: number,
): Promise<Verdict & { pathArgs: string[]; usesSudo: boolean }> {
  const verdict: Verdict = { risk: "none", action: "read_only", reasons: [] };
  const pathArgs: string[] = [];
  const { words, wrappers, assignments } = unwrap(command.words);
  const usesSudo = wrappers.includes("sudo") || wrappers.includes("doas");

  if (usesSudo) raise(verdict, "high", "privileged", "runs as root (sudo)");
  if (wrappers.includes("xargs")) raise(verdict, "medium", "execute", "xargs runs commands built from input");
  if (wrappers.includes("exec")) raise(verdict, "low", "execute", "exec");
  if (assignments.some((a) => SEARCH_PATH_ASSIGNMENT.test(a))) {
    raise(verdict, "medium", "execute", "changes how programs are found or loaded");
  }
  if (command.joinedBy === "|" || command.joinedBy === "|&") {
    const program = words[0] ? programName(words[0].value) : "";
    if (
      SHELLS.has(program) ||
      ["python", "python3", "node", "perl", "ruby", "php", "eval", "source"].includes(program)
    ) {
      raise(verdict, "high", "execute", `pipes data into ${program}`);
    }
  }

  for (const redirect of command.redirects) {
    if (redirect.op.includes("<") && !redirect.op.includes(">")) {
      if (redirect.op !== "<<" && redirect.op !== "<<-" && redirect.op !== "<<<") pathArgs.push(redirect.target);
      continue;
    }
    if (HARMLESS_TARGETS.test(redirect.target)) continue;
    pathArgs.push(redirect.target);
    const dotted = redirect.target.split("/").some((part) => part.startsWith(".") && part !== "." && part !== "..");
    if (dotted || redirect.target.startsWith("~")) {
      raise(verdict, "high", "file_write", `writes into a dotfile (${redirect.target})`);
    } else if (redirect.target.startsWith("/") || redirect.target.includes("..") || redirect.target.includes("$")) {
      raise(verdict, "high", "file_write", `writes to ${redirect.target}`);
    } else {
      raise(verdict, "medium", "file_write", `writes to ${redirect.target}`);
    }
  }

  if (words.length === 0) {
    if (wrappers.length > 0 && !wrappers.every((w) => w === "env"))
      raise(verdict, "medium", "unknown", "wrapper without a command");
    return { ...verdict, pathArgs, usesSudo };
  }

  const program = programName(words[0].value);
  const args = words.slice(1).map((w) => w.value);
  const allArgsArePaths = FILE_ARGUMENT_PROGRAMS.has(program);
  for (const arg of args) {
    if (allArgsArePaths ? !arg.startsWith("-") : looksLikePath(arg)) pathArgs.push(arg);
    // `--output=../x`: the value is the path.
    const valued = /^--?[\w-]+=(.+)$/.exec(arg);
    if (valued && looksLikePath(valued[1])) pathArgs.push(valued[1]);
  }
  if (words[0].expands) raise(verdict, "high", "unknown", "the program name is computed");
  await applyProgramRules(verdict, program, args, depth, command.stdin);
  if (FILE_DELETE.has(program) && words.slice(1).some((word) => word.expands))
    raise(verdict, "high", "file_delete", `${program} deletes a path computed when it runs`);
  return { ...verdict, pathArgs, usesSudo };
}

async function applyProgramRules(
  verdict: Verdict,
  program: string,
  args: string[],
  depth: number,
  stdin: string[] = [],
): Promise<void> {
  const sub = args.find((a) => !a.startsWith("-")) ?? "";
  // `-rf` contains `-r` and `-f`.
  const has = (...flags: string[]) =>
    args.some(
      (a) =>
        flags.includes(a) || (/^-[a-zA-Z]+$/.test(a) && flags.some((f) => /^-[a-zA-Z]$/.test(f) && a.includes(f[1]))),
    );

  if (SHELLS.has(program) || program === "eval" || program === "source" || program === ".") {
    const scriptIndex = args.findIndex((a) => a === "-c" || /^-[a-z]*c$/.test(a));
    if (program === "eval") {
      raise(verdict, "medium", "execute", "eval runs a constructed command");
      merge(verdict, await classifyLine(args.join(" "), depth + 1));
    } else if (scriptIndex >= 0 && args[scriptIndex + 1] !== undefined) {
      raise(verdict, "medium", "execute", `${program} -c runs a nested script`);
      merge(verdict, await classifyLine(args[scriptIndex + 1], depth + 1));
    } else if (stdin.length > 0 && !args.some((a) => !a.startsWith("-"))) {
      // `bash <<EOF … EOF`, `sh <<< '…'`: the here-document is the script.
      raise(verdict, "medium", "execute", `${program} runs a script from a here-document`);
      for (const script of stdin) merge(verdict, await classifyLine(script, depth + 1));
    } else {
      raise(verdict, "medium", "execute", `runs a shell script with ${program}`);
    }
    return;
  }
  if (program === "sudo" || PRIVILEGED.has(program) || program.startsWith("mkfs"))
    return raise(verdict, "high", "privileged", `${program} needs administrator rights`);
  if (program === "chown" || program === "chgrp" || program === "dd")
    return raise(verdict, "high", "file_write", `${program} can overwrite ownership or devices`);
  if (program === "git") return applyGitRules(verdict, args);
  if (PACKAGE_MANAGERS.has(program)) return applyPackageRules(verdict, program, sub, args);
  if (program === "npx" || program === "bunx" || program === "pnpx")
    return raise(verdict, "medium", "package_install", `${program} downloads and runs a package`);
  if (program === "find") return applyFindRules(verdict, args, depth);
  if (program === "sed" || program === "perl") {
    if (args.some((a) => a === "-i" || a.startsWith("-i") || a.startsWith("--in-place")))
      return raise(verdict, "medium", "file_write", `${program} edits files in place`);
    return raise(verdict, program === "perl" ? "medium" : "low", program === "perl" ? "execute" : "read_only", program);
  }
  if (program === "awk" || program === "gawk") {
    return args.some((a) => a.includes("system(") || a.includes(">") || a.includes("|"))
      ? raise(verdict, "medium", "execute", "awk runs commands or writes files")
      : raise(verdict, "low", "read_only", "awk");
  }
  if (FILE_DELETE.has(program)) {
    const recursiveOrForce = has("-r", "-R", "-f", "--recursive", "--force");
    const broad = args.some((a) => ["/", "~", "*", ".", "..", "/*", "~/"].includes(a) || a.startsWith("/"));
    return raise(
      verdict,
      recursiveOrForce || broad || program === "shred" ? "high" : "medium",
      "file_delete",
      `${program} deletes files`,
    );
  }
  if (NETWORK.has(program)) {
    const writes = args.some((a) =>
      [
        "-o",
        "-O",
        "--output",
        "--remote-name",
        "-d",
        "--data",
        "--data-binary",
        "-F",
        "--form",
        "-T",
        "--upload-file",
        "-X",
      ].includes(a),
    );
    return raise(
      verdict,
      "medium",
      "network",
      writes ? `${program} sends or saves data` : `${program} uses the network`,
    );
  }
  if (NETWORK_READ.has(program)) return raise(verdict, "low", "network", `${program} uses the network`);
  if (FILE_WRITE.has(program)) return raise(verdict, "medium", "file_write", `${program} writes files`);
  if (PROCESS.has(program)) return raise(verdict, "medium", "process", `${program} affects other processes`);
  if (EXECUTE.has(program) || program.startsWith("./") || program.includes("/"))
    return raise(verdict, "medium", "execute", `runs ${program}`);
  if (DECLARATIONS.has(program)) {
    if (args.some((a) => SEARCH_PATH_ASSIGNMENT.test(a)))
      raise(verdict, "medium", "execute", "changes how programs are found or loaded");
    return raise(verdict, "low", "read_only", program);
  }
  if (["alias", "set", "shopt", "ulimit", "umask", "wait", "jobs", "read"].includes(program))
    return raise(verdict, "low", "read_only", program);
  if (program === "crontab") return raise(verdict, "high", "privileged", "crontab schedules commands");
  if (READ_ONLY.has(program)) return raise(verdict, ALLOWLIST.has(program) ? "none" : "low", "read_only", program);
  raise(verdict, "medium", "unknown", `unknown program ${program}`);
}

function applyGitRules(verdict: Verdict, args: string[]): void {
  // `git -C dir status`, `git -c k=v log`: skip global options to find the subcommand.
  let index = 0;
  while (index < args.length && args[index].startsWith("-"))
    index += ["-C", "-c", "--git-dir", "--work-tree"].includes(args[index]) ? 2 : 1;
  const sub = args[index] ?? "";
  const rest = args.slice(index + 1);
  if (args.slice(0, index).some((a) => a === "-c"))
    raise(verdict, "medium", "git_write", "git -c can set hooks or commands");
  if (rest.some((a) => a === "--output" || a.startsWith("--output=")))
    raise(verdict, "medium", "file_write", `git ${sub} --output writes a file`);
  if (GIT_READ.has(sub))
    return raise(
      verdict,
      sub === "status" || sub === "diff" || sub === "log" ? "none" : "low",
      "git_read",
      `git ${sub}`,
    );
  if (
    (sub === "branch" || sub === "tag" || sub === "remote" || sub === "stash") &&
    rest.every((a) => ["-a", "-v", "-vv", "-r", "--list", "-l", "list", "--all"].includes(a))
  ) {
    return raise(verdict, "low", "git_read", `git ${sub}`);
  }
  if (sub === "config" && rest.some((a) => ["--get", "--list", "-l", "--get-all"].includes(a)))
    return raise(verdict, "low", "git_read", "git config read");
  if (sub === "clean") return raise(verdict, "high", "file_delete", "git clean deletes untracked files");
  if (sub === "reset" && rest.includes("--hard"))
    return raise(verdict, "high", "git_write", "git reset --hard discards changes");
  if (
    (sub === "checkout" || sub === "restore") &&
    rest.some((a) => a === "--" || a === "." || a === "-f" || a === "--force")
  )
    return raise(verdict, "high", "git_write", `git ${sub} can discard changes`);
  if (sub === "push")
    return raise(
      verdict,
      rest.some((a) => a === "-f" || a.startsWith("--force") || a.startsWith("+")) ? "high" : "medium",
      "network",
      "git push changes the remote",
    );
  if (GIT_NETWORK.has(sub)) return raise(verdict, "medium", "network", `git ${sub} uses the network`);
  raise(verdict, "medium", "git_write", `git ${sub || "(no subcommand)"}`);
}

function applyPackageRules(verdict: Verdict, program: string, sub: string, args: string[]): void {
  if (program === "npm" && sub === "audit" && args.includes("fix"))
    return raise(verdict, "medium", "package_install", "npm audit fix changes dependencies");
  if (program === "npm" && sub === "publish") return raise(verdict, "high", "network", "publishes a package");
  if (["apt", "apt-get", "dnf", "yum", "pacman", "apk"].includes(program) && !PACKAGE_CHECK_SUBCOMMANDS.has(sub)) {
    return raise(verdict, "high", "package_install", `${program} changes system packages`);
  }
  if (PACKAGE_INSTALL_SUBCOMMANDS.has(sub) || (program === "pacman" && args.some((a) => a.startsWith("-S"))))
    return raise(verdict, "medium", "package_install", `${program} ${sub} changes dependencies`);
  if (PACKAGE_CHECK_SUBCOMMANDS.has(sub) || sub === "")
    return raise(verdict, "low", "package_check", `${program} ${sub}`.trim());
  raise(verdict, "medium", "execute", `${program} ${sub} runs project scripts or tools`);
}

async function applyFindRules(verdict: Verdict, args: string[], depth: number): Promise<void> {
  raise(verdict, "low", "read_only", "find");
  for (const [index, arg] of args.entries()) {
    if (arg === "-delete") raise(verdict, "high", "file_delete", "find -delete");
    if (arg.startsWith("-fprint") || arg === "-fls") raise(verdict, "medium", "file_write", `find ${arg}`);
    if (["-exec", "-execdir", "-ok", "-okdir"].includes(arg)) {
      raise(verdict, "medium", "execute", `find ${arg} runs a command per file`);
      const end = args.findIndex((a, i) => i > index && (a === ";" || a === "+"));
      merge(
        verdict,
        await classifyLine(
          args
            .slice(index + 1, end === -1 ? undefined : end)
            .map(quoteForShell)
            .join(" "),
          depth + 1,
        ),
      );
    }
  }
}

function raise(verdict: Verdict, risk: RiskLevel, action: ActionType, reason: string): void {
  if (RISK_ORDER.indexOf(risk) > RISK_ORDER.indexOf(verdict.risk)) verdict.risk = risk;
  if (ACTION_ORDER.indexOf(action) > ACTION_ORDER.indexOf(verdict.action)) verdict.action = action;
  if (risk !== "none" && !verdict.reasons.includes(reason)) verdict.reasons.push(reason);
}

function merge(
  into: Verdict,
  from: { risk: RiskLevel; actionType?: ActionType; action?: ActionType; reasons: string[] },
): void {
  const action = from.action ?? from.actionType ?? "unknown";
  if (RISK_ORDER.indexOf(from.risk) > RISK_ORDER.indexOf(into.risk)) into.risk = from.risk;
  if (ACTION_ORDER.indexOf(action) > ACTION_ORDER.indexOf(into.action)) into.action = action;
  for (const reason of from.reasons) if (!into.reasons.includes(reason)) into.reasons.push(reason);
}
