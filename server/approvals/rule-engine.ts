import picomatch from "picomatch";

/**
 * The pure rule engine: which rule, if any, decides a call. Rules are allow /
 * ask / deny with globs over the tool name and the call's subject (a command
 * line or a path). The most restrictive matching rule wins — deny over ask
 * over allow — whatever its scope, so an "allow" can never override a "deny".
 */

export type RuleAction = "allow" | "ask" | "deny";

export interface RuleLike {
  id: string;
  scope: string;
  tool: string;
  pattern: string;
  action: string;
  expiresAt?: Date | null;
}

export interface RuleSubject {
  tool: string;
  subject: string;
  /** A chained / piped / redirected shell line: wildcards may not allow it, only an exact pattern. */
  compound?: boolean;
}

export interface RuleMatch<R extends RuleLike = RuleLike> {
  action: RuleAction;
  rule: R;
}

const PRECEDENCE: Record<RuleAction, number> = { deny: 3, ask: 2, allow: 1 };

/** Tools whose subject is a command line: `*` there spans `/` (`git diff*` covers `git diff src/a.ts`). */
const COMMAND_TOOLS = new Set(["shell", "bash"]);

/** Splits a shell line at `;`, `&&`, `||`, `|`, newlines and substitutions, for deny/ask matching only. */
const SEGMENT_SEPARATORS = /;|&&|\|\||\||\n|`|\$\(|\)|&/;

export function matchRules<R extends RuleLike>(
  rules: readonly R[],
  call: RuleSubject,
  now: Date = new Date(),
): RuleMatch<R> | null {
  let best: RuleMatch<R> | null = null;
  for (const rule of rules) {
    if (!isRuleAction(rule.action)) continue;
    if (rule.expiresAt && rule.expiresAt.getTime() <= now.getTime()) continue;
    if (!globMatch(rule.tool, call.tool, false)) continue;
    if (!ruleMatchesSubject(rule, call)) continue;
    if (!best || PRECEDENCE[rule.action] > PRECEDENCE[best.action]) best = { action: rule.action, rule };
  }
  return best;
}

function ruleMatchesSubject(rule: RuleLike, call: RuleSubject): boolean {
  const command = COMMAND_TOOLS.has(call.tool);
  const subject = call.subject.trim();
  if (rule.pattern === "*" || rule.pattern === "**") {
    // "Everything" allows a compound line only when the rule is not an allow; see below.
    return !(call.compound && rule.action === "allow");
  }
  if (call.compound) {
    if (rule.action === "allow") return rule.pattern.trim() === subject;
    // A deny or ask must still catch `ls && rm -rf x`: try the whole line and each part.
    const parts = [
      subject,
      ...subject
        .split(SEGMENT_SEPARATORS)
        .map((part) => part.trim())
        .filter(Boolean),
    ];
    return parts.some((part) => globMatch(rule.pattern, part, command));
  }
  if (command && rule.action === "allow") return commandPrefixMatch(rule.pattern, subject);
  return globMatch(rule.pattern, subject, command) || (command && commandPrefixMatch(rule.pattern, subject));
}

/**
 * For command lines a trailing `*` ends at a word boundary: `git status*`
 * allows `git status` and `git status --short`, not `git statusx`.
 */
function commandPrefixMatch(pattern: string, subject: string): boolean {
  const trimmed = pattern.trim();
  if (!trimmed.endsWith("*") || trimmed.endsWith(" *")) return globMatch(trimmed, subject, true);
  const stem = trimmed.slice(0, -1);
  return globMatch(stem, subject, true) || globMatch(`${stem} *`, subject, true);
}

function globMatch(pattern: string, value: string, command: boolean): boolean {
  if (pattern === value) return true;
  try {
    return picomatch.isMatch(value, pattern, { dot: true, bash: command, nonegate: command });
  } catch {
    // An unparsable pattern matches only itself (checked above) rather than failing the gate.
    return false;
  }
}

function isRuleAction(action: string): action is RuleAction {
  return action === "allow" || action === "ask" || action === "deny";
}
