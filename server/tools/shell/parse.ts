/**
 * A cautious shell-line parser for the command classifier. It does not run or
 * fully understand bash; it splits a line into simple commands and notes every
 * construct that could hide another command (substitutions, redirections,
 * chaining) so the classifier can raise the risk. When unsure it reports more,
 * never less.
 */

export interface Word {
  /** The word with quotes removed (substitutions kept as written). */
  value: string;
  /** Offsets in the original line, for rewriting (sudo → sudo -S). */
  start: number;
  end: number;
  /** Any part of it was quoted or escaped. */
  quoted: boolean;
  /** Contains an unquoted or double-quoted `$` expansion or a substitution. */
  expands: boolean;
}

export interface Redirect {
  op: string;
  target: string;
}

export interface SimpleCommand {
  words: Word[];
  redirects: Redirect[];
  /** The control operator before this command (`|` means its stdin is the previous command's output). */
  joinedBy?: string;
}

export interface ParsedLine {
  commands: SimpleCommand[];
  /** Bodies of `$(…)`, backticks and `<(…)`/`>(…)`, to be classified too. */
  substitutions: string[];
  /** Operators that chain or background commands: `&&`, `||`, `;`, `|`, `&`, newline, subshell parentheses. */
  operators: string[];
  hasHeredoc: boolean;
  /** Unbalanced quotes or substitutions: the line may not mean what it seems. */
  malformed: boolean;
}

const CONTROL_OPERATORS = ["&&", "||", "|&", ";;", ";", "|", "&", "\n", "(", ")"];
const REDIRECT_OPERATORS = ["&>>", "&>", ">>", ">|", ">&", "<<<", "<<-", "<<", "<>", "<&", ">", "<"];

export function parseShell(line: string): ParsedLine {
  const parsed: ParsedLine = { commands: [], substitutions: [], operators: [], hasHeredoc: false, malformed: false };
  let current: SimpleCommand = { words: [], redirects: [] };
  let pendingRedirect: string | undefined;
  let word: Word | undefined;
  let i = 0;

  const startWord = (at: number) => (word ??= { value: "", start: at, end: at, quoted: false, expands: false });
  const endWord = () => {
    if (!word) return;
    word.end = i;
    if (pendingRedirect) {
      current.redirects.push({ op: pendingRedirect, target: word.value });
      pendingRedirect = undefined;
    } else {
      current.words.push(word);
    }
    word = undefined;
  };
  const endCommand = (operator: string) => {
    endWord();
    if (current.words.length > 0 || current.redirects.length > 0) parsed.commands.push(current);
    current = { words: [], redirects: [], joinedBy: operator };
    parsed.operators.push(operator);
  };
  /** Reads a `$(`…`)` or `<(`…`)` body starting after the opening parenthesis; returns the index after `)`. */
  const readParenBody = (from: number): number => {
    let depth = 1;
    let j = from;
    let quote: string | undefined;
    for (; j < line.length; j++) {
      const c = line[j];
      if (quote) {
        if (c === "\\" && quote === '"') j++;
        else if (c === quote) quote = undefined;
        continue;
      }
      if (c === "\\") j++;
      else if (c === "'" || c === '"') quote = c;
      else if (c === "(") depth++;
      else if (c === ")" && --depth === 0) break;
    }
    if (depth !== 0) parsed.malformed = true;
    parsed.substitutions.push(line.slice(from, j));
    return j + 1;
  };
  const readBacktick = (from: number): number => {
    const close = line.indexOf("`", from);
    if (close === -1) parsed.malformed = true;
    const end = close === -1 ? line.length : close;
    parsed.substitutions.push(line.slice(from, end));
    return end + 1;
  };

  while (i < line.length) {
    const c = line[i];
    if (c === " " || c === "\t") {
      endWord();
      i++;
      continue;
    }
    if (c === "#" && !word) {
      while (i < line.length && line[i] !== "\n") i++;
      continue;
    }
    if (c === "\\") {
      const w = startWord(i);
      if (line[i + 1] === "\n") {
        i += 2;
        continue;
      }
      w.value += line[i + 1] ?? "";
      w.quoted = true;
      i += 2;
      continue;
    }
    if (c === "'") {
      const w = startWord(i);
      const close = line.indexOf("'", i + 1);
      if (close === -1) parsed.malformed = true;
      const end = close === -1 ? line.length : close;
      w.value += line.slice(i + 1, end);
      w.quoted = true;
      i = end + 1;
      continue;
    }
    if (c === '"') {
      const w = startWord(i);
      w.quoted = true;
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === "\\" && j + 1 < line.length) {
          w.value += line[++j];
        } else if (line[j] === "$" && line[j + 1] === "(") {
          w.expands = true;
          const end = readParenBody(j + 2);
          w.value += line.slice(j, end);
          j = end - 1;
        } else if (line[j] === "`") {
          w.expands = true;
          const end = readBacktick(j + 1);
          w.value += line.slice(j, end);
          j = end - 1;
        } else {
          if (line[j] === "$") w.expands = true;
          w.value += line[j];
        }
      }
      if (j >= line.length) parsed.malformed = true;
      i = j + 1;
      continue;
    }
    if (c === "$" && line[i + 1] === "(") {
      const w = startWord(i);
      w.expands = true;
      const end = readParenBody(i + 2);
      w.value += line.slice(i, end);
      i = end;
      continue;
    }
    if (c === "`") {
      const w = startWord(i);
      w.expands = true;
      const end = readBacktick(i + 1);
      w.value += line.slice(i, end);
      i = end;
      continue;
    }
    if ((c === "<" || c === ">") && line[i + 1] === "(") {
      const w = startWord(i);
      w.expands = true;
      const end = readParenBody(i + 2);
      w.value += line.slice(i, end);
      i = end;
      continue;
    }
    const redirect = REDIRECT_OPERATORS.find((op) => line.startsWith(op, i));
    if (redirect) {
      // `2>` / `1>>`: a word made only of digits right before is the fd, not an argument.
      const fd = word && /^\d+$/.test(word.value) && !word.quoted ? word.value : "";
      if (fd) word = undefined;
      else endWord();
      if (redirect.startsWith("<<") && redirect !== "<<<") parsed.hasHeredoc = true;
      pendingRedirect = fd + redirect;
      i += redirect.length;
      // `2>&1`, `>&2`: the target is an fd.
      if ((redirect === ">&" || redirect === "<&") && /[\d-]/.test(line[i] ?? "")) {
        let j = i;
        while (j < line.length && /[\d-]/.test(line[j])) j++;
        current.redirects.push({ op: pendingRedirect, target: `&${line.slice(i, j)}` });
        pendingRedirect = undefined;
        i = j;
      }
      continue;
    }
    const control = CONTROL_OPERATORS.find((op) => line.startsWith(op, i));
    if (control) {
      endCommand(control);
      i += control.length;
      continue;
    }
    const w = startWord(i);
    if (c === "$") w.expands = true;
    w.value += c;
    i++;
  }
  endWord();
  if (pendingRedirect) parsed.malformed = true;
  if (current.words.length > 0 || current.redirects.length > 0) parsed.commands.push(current);
  return parsed;
}
