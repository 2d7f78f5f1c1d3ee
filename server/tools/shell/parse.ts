import { createRequire } from "node:module";
import path from "node:path";
import type { Node, Parser } from "web-tree-sitter";
import { PACKAGED, ROOT_DIR } from "../../config";

/**
 * The command classifier's view of a shell line, read by a real bash parser (tree-sitter-bash,
 * the grammar editors such as Zed and GitHub use). Every simple command is found wherever it
 * stands — in a group, a negation, a loop, a function body, a here-document, a substitution —
 * so a construct around a command can never hide it. A line the grammar cannot read whole is
 * `malformed`, and the classifier rates it high.
 */

export interface Word {
  /** The word with quotes removed (expansions and substitutions kept as written). */
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
  /** `|` or `|&` when the command reads the output of an earlier part of a pipeline. */
  joinedBy?: string;
  /** Here-documents and here-strings fed to it: a shell reading one runs it as a script. */
  stdin: string[];
}

export interface ParsedLine {
  /** Every simple command in the line, nested ones included, in source order. */
  commands: SimpleCommand[];
  /** Bodies of `$(…)`, backticks and `<(…)`/`>(…)` (their commands are in `commands` too). */
  substitutions: string[];
  /**
   * Backtick bodies inside unquoted here-documents: the shell runs them, but the grammar leaves
   * them as text, so the classifier reads each as a nested script.
   */
  unparsedSubstitutions: string[];
  /** Operators that chain or background commands: `&&`, `||`, `;`, `|`, `&`, newline, `(` for a subshell. */
  operators: string[];
  /** Compound constructs: groups, negations, loops, conditionals, function definitions. */
  constructs: string[];
  hasHeredoc: boolean;
  /** The grammar could not read the whole line: it may not mean what it seems. */
  malformed: boolean;
}

/** Where scripts/pack.mjs puts the grammar in the package: beside the bundled bridge. */
const PACKED_GRAMMAR = "dist/bridge/tree-sitter-bash.wasm";

/** The bash grammar, loaded: it reads any line. Only shellParser() makes one. */
export interface ShellParser {
  parse(line: string): ParsedLine;
}

let loading: Promise<ShellParser> | undefined;

/**
 * The grammar, loaded once per process on the first line that needs it: ~50 ms of WebAssembly (and
 * the library's 150 kB of JavaScript) that the bridge's start, and every `worldline` that runs no
 * shell command, does not wait for. The parser exists only once it is loaded, so nothing can call it before.
 */
export function shellParser(): Promise<ShellParser> {
  return (loading ??= (async () => {
    const { Language, Parser } = await import("web-tree-sitter");
    await Parser.init();
    const loaded = new Parser();
    loaded.setLanguage(await Language.load(grammarFile()));
    return { parse: (line) => parseWithGrammar(loaded, line) };
  })());
}

/**
 * A line as the classifier reads it. A plain line (see plainLine), such as a quick `ls` or
 * `npm test`, is read without the grammar, so a process that runs only such commands never
 * compiles its WebAssembly (bench/README.md, print mode).
 */
export async function parseShell(line: string): Promise<ParsedLine> {
  return plainLine(line) ?? (await shellParser()).parse(line);
}

/**
 * A line of one command whose words are all literal, separated by single spaces: a first word of
 * letters, digits and `_ . / : -` (starting with neither `:` nor `-`), later words of those and
 * `@ % + , =` (not starting with `=`). No quote, escape, expansion, glob, tilde, comment, operator,
 * redirect or newline can appear, and the first word is not a reserved word or an assignment, so
 * bash reads it as one simple command of exactly these words. The grammar gives the same: the
 * characters are those on which tests/unit/tools/shell-plain-line.test.ts found the two agree
 * (the grammar reads `==` and a lone `-` command its own way, so those go to it).
 */
const PLAIN_LINE = /^[\w./][\w./:-]*(?: [\w./:@%+,-][\w./:=@%+,-]*)*$/;
const KEYWORDS = new Set(
  "if then else elif fi case esac for select while until do done in function time coproc declare typeset export readonly local unset".split(
    " ",
  ),
);

export function plainLine(line: string): ParsedLine | undefined {
  if (!PLAIN_LINE.test(line)) return undefined;
  const words: Word[] = [];
  let start = 0;
  for (const value of line.split(" ")) {
    words.push({ value, start, end: start + value.length, quoted: false, expands: false });
    start += value.length + 1;
  }
  if (KEYWORDS.has(words[0].value)) return undefined;
  return {
    commands: [{ words, redirects: [], stdin: [] }],
    substitutions: [],
    unparsedSubstitutions: [],
    operators: [],
    constructs: [],
    hasHeredoc: false,
    malformed: false,
  };
}

/**
 * The bash grammar's WebAssembly. Only this file of tree-sitter-bash is used, so the installed
 * package does not depend on it (its install script builds a native binding nobody loads):
 * scripts/pack.mjs copies the file beside the bundled bridge. A checkout reads it from node_modules.
 */
function grammarFile(): string {
  if (PACKAGED) return path.join(ROOT_DIR, PACKED_GRAMMAR);
  return createRequire(import.meta.url).resolve("tree-sitter-bash/tree-sitter-bash.wasm");
}

const CHAIN_TOKENS = new Set(["&&", "||", ";", "&", "|", "|&", ";;", ";&", ";;&"]);
const REDIRECTS = new Set(["file_redirect", "heredoc_redirect", "herestring_redirect"]);
/** Nodes that run the statements they hold, and the name the classifier gives them. */
const CONSTRUCTS: Record<string, string> = {
  compound_statement: "group",
  subshell: "subshell",
  negated_command: "negation",
  for_statement: "loop",
  c_style_for_statement: "loop",
  while_statement: "loop",
  if_statement: "conditional",
  case_statement: "conditional",
  function_definition: "function definition",
};
/** Statements whose words the classifier reads like a simple command's (`export X=…`, `[ -f x ]`). */
const BUILTIN_STATEMENTS = new Set(["declaration_command", "unset_command", "test_command"]);
/** Reserved words: never a program's name, whatever the grammar made of them. */
const RESERVED_WORDS = new Set(["{", "}", "!", "do", "done", "then", "fi", "else", "elif", "esac", "in"]);
const NOT_STATEMENTS = new Set(["comment", "heredoc_body", "variable_name", "word"]);

function parseWithGrammar(parser: Parser, line: string): ParsedLine {
  const tree = parser.parse(line);
  if (!tree) throw new Error("the shell parser returned no tree");
  try {
    const parsed: ParsedLine = {
      commands: [],
      substitutions: [],
      unparsedSubstitutions: [],
      operators: [],
      constructs: [],
      hasHeredoc: false,
      malformed: tree.rootNode.hasError,
    };
    visit(tree.rootNode, parsed, undefined);
    return parsed;
  } finally {
    tree.delete(); // the tree lives in WebAssembly memory, which garbage collection does not reach
  }
}

function visit(node: Node, parsed: ParsedLine, joinedBy: string | undefined): void {
  const construct = CONSTRUCTS[node.type];
  if (construct) parsed.constructs.push(construct);
  if (node.type === "subshell") parsed.operators.push("(");
  if (node.type === "command_substitution" || node.type === "process_substitution") {
    parsed.substitutions.push(node.text.replace(/^(\$\(|[<>]\(|`)/, "").replace(/(\)|`)$/, ""));
  }
  if (node.type === "heredoc_redirect") parsed.hasHeredoc = true;
  if (node.type === "heredoc_body" && !quotedDelimiter(node.parent)) {
    for (const match of node.text.matchAll(/`([^`]*)`/g)) {
      parsed.substitutions.push(match[1]);
      parsed.unparsedSubstitutions.push(match[1]);
    }
  }
  if (node.type === "command" || BUILTIN_STATEMENTS.has(node.type)) {
    const command = simpleCommand(node, joinedBy);
    // The grammar reads some lines it should refuse (`ls; }`, and `! { …; }`) as a command named
    // `{` or `}`: the words after it are still a command, but the line is not what it seems.
    while (command.words.length > 0 && RESERVED_WORDS.has(command.words[0].value) && !command.words[0].quoted) {
      command.words.shift();
      parsed.malformed = true;
    }
    parsed.commands.push(command);
  } else if (node.type === "variable_assignment" && node.parent?.type !== "command") {
    if (node.parent?.type !== "declaration_command") parsed.commands.push(bare([wordOf(node)], [], joinedBy));
  } else if (node.type === "redirected_statement") {
    const body = node.childForFieldName("body");
    if (body?.type !== "command") {
      const { redirects, stdin } = redirectsOf(node.children.filter((child) => REDIRECTS.has(child.type)));
      parsed.commands.push({ ...bare([], redirects, joinedBy), stdin });
    }
  }
  recordSeparators(node, parsed);
  node.children.forEach((child, index) => {
    // Everything after the first element of a pipeline reads the output before it.
    const piped = node.type === "pipeline" && index > 0 ? pipeToken(node, index) : joinedBy;
    visit(child, parsed, piped);
  });
}

/** `<<'EOF'`, `<<"EOF"`, `<<\EOF`: the body is literal text, nothing in it runs. */
function quotedDelimiter(heredoc: Node | null): boolean {
  const start = heredoc?.namedChildren.find((child) => child?.type === "heredoc_start");
  return /['"\\]/.test(start?.text ?? "");
}

function bare(words: Word[], redirects: Redirect[], joinedBy: string | undefined): SimpleCommand {
  return { words, redirects, stdin: [], ...(joinedBy ? { joinedBy } : {}) };
}

/** The `|` or `|&` before child `index` of a pipeline. */
function pipeToken(pipeline: Node, index: number): string {
  for (let i = index - 1; i >= 0; i--) {
    const type = pipeline.child(i)?.type;
    if (type === "|" || type === "|&") return type;
  }
  return "|";
}

/** Chain tokens, and a newline wherever two statements follow each other without one. */
function recordSeparators(node: Node, parsed: ParsedLine): void {
  let previousWasStatement = false;
  for (const child of node.children) {
    if (!child.isNamed) {
      if (CHAIN_TOKENS.has(child.type)) parsed.operators.push(child.type);
      previousWasStatement = false;
      continue;
    }
    if (NOT_STATEMENTS.has(child.type) || !isStatementList(node)) continue;
    if (previousWasStatement) parsed.operators.push("\n");
    previousWasStatement = true;
  }
}

function isStatementList(node: Node): boolean {
  return ["program", "compound_statement", "subshell", "do_group", "else_clause", "case_item"].includes(node.type);
}

function simpleCommand(node: Node, joinedBy: string | undefined): SimpleCommand {
  const words: Word[] = [];
  const redirectNodes: Node[] = [];
  if (node.type === "test_command") words.push({ ...wordOf(node), value: "test", quoted: false, expands: false });
  for (const child of node.type === "test_command" ? [] : node.namedChildren) {
    if (!child) continue;
    if (REDIRECTS.has(child.type)) redirectNodes.push(child);
    else if (child.type === "command_name") words.push(wordOf(child.namedChild(0) ?? child));
    else if (child.type !== "comment") words.push(wordOf(child));
  }
  if (node.type === "declaration_command" || node.type === "unset_command") {
    const keyword = node.child(0);
    if (keyword)
      words.unshift({
        value: keyword.type,
        start: keyword.startIndex,
        end: keyword.endIndex,
        quoted: false,
        expands: false,
      });
  }
  // Redirects written after the command belong to the statement around it.
  if (node.parent?.type === "redirected_statement" && node.parent.childForFieldName("body")?.id === node.id) {
    redirectNodes.push(...node.parent.children.filter((child) => REDIRECTS.has(child.type)));
  }
  const { redirects, stdin } = redirectsOf(redirectNodes);
  return { ...bare(words, redirects, joinedBy), stdin };
}

function redirectsOf(nodes: Node[]): { redirects: Redirect[]; stdin: string[] } {
  const redirects: Redirect[] = [];
  const stdin: string[] = [];
  for (const node of nodes) {
    if (node.type === "herestring_redirect") {
      const body = node.namedChildren.at(-1);
      redirects.push({ op: "<<<", target: body ? wordOf(body).value : "" });
      if (body) stdin.push(wordOf(body).value);
      continue;
    }
    if (node.type === "heredoc_redirect") {
      const start = node.namedChildren.find((child) => child?.type === "heredoc_start");
      const body = node.namedChildren.find((child) => child?.type === "heredoc_body");
      const operator = node.children.find((child) => child && !child.isNamed)?.type ?? "<<";
      redirects.push({ op: operator, target: start?.text ?? "" });
      stdin.push(body?.text ?? "");
      // `cat <<EOF > file`: a redirect written after the here-document's start belongs to the command.
      redirects.push(
        ...redirectsOf(node.namedChildren.filter((child) => child?.type === "file_redirect") as Node[]).redirects,
      );
      continue;
    }
    const descriptor = node.childForFieldName("descriptor")?.text ?? "";
    const operator = node.children.find((child) => !child?.isNamed)?.type ?? ">";
    const destination = node.childForFieldName("destination");
    if (!destination || destination.type === "process_substitution") continue; // its commands are classified on their own
    const fd = /&$/.test(operator) && /^\d+-?$|^-$/.test(destination.text);
    redirects.push({ op: descriptor + operator, target: fd ? `&${destination.text}` : wordOf(destination).value });
  }
  return { redirects, stdin };
}

/** A word as the shell reads it: quotes removed, escapes resolved, expansions kept as written. */
function wordOf(node: Node): Word {
  const word: Word = { value: "", start: node.startIndex, end: node.endIndex, quoted: false, expands: false };
  appendWord(word, node);
  // `FOO="a b" cmd`: the name is what makes it an assignment, and the name is never quoted.
  if (node.type === "variable_assignment") word.quoted = false;
  return word;
}

function appendWord(word: Word, node: Node): void {
  switch (node.type) {
    case "word":
    case "number":
      if (node.text.includes("\\")) word.quoted = true;
      word.value += node.text.replace(/\\(.)/gs, "$1");
      return;
    case "raw_string":
      word.quoted = true;
      word.value += node.text.slice(1, -1);
      return;
    case "ansi_c_string":
      word.quoted = true;
      word.value += node.text.slice(2, -1);
      return;
    case "string":
    case "translated_string":
      word.quoted = true;
      for (const part of node.namedChildren) if (part) appendWord(word, part);
      return;
    case "string_content":
      word.value += node.text.replace(/\\([\\"$`])/g, "$1");
      return;
    case "concatenation":
    case "variable_assignment":
      if (node.type === "variable_assignment") {
        word.value += `${node.childForFieldName("name")?.text ?? ""}=`;
        const value = node.childForFieldName("value");
        if (value) appendWord(word, value);
        return;
      }
      for (const part of node.children) if (part) appendWord(word, part);
      return;
    default:
      if (/[$`]/.test(node.text) || node.type.includes("expansion") || node.type.includes("substitution")) {
        word.expands = true;
      }
      word.value += node.text;
  }
}
