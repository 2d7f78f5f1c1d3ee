import type { Word } from "./parse";
import { SUBCOMMAND_PROGRAMS, WRAPPERS } from "./classify-tables";

/** The words of one simple command as shell/classify.ts reads them: wrappers stripped, program named. */

/** Strips `VAR=x`, `sudo -u x`, `env`, `timeout 5`, `xargs -n1` … and returns the real command words. */
export function unwrap(all: Word[]): { words: Word[]; wrappers: string[]; assignments: string[] } {
  const wrappers: string[] = [];
  const assignments: string[] = [];
  let index = 0;
  const takesValue: Record<string, Set<string>> = {
    sudo: new Set(["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T"]),
    timeout: new Set(["-s", "-k", "--signal", "--kill-after"]),
    xargs: new Set(["-n", "-I", "-L", "-P", "-d", "-E", "-s", "-a"]),
    nice: new Set(["-n"]),
    ionice: new Set(["-c", "-n"]),
    watch: new Set(["-n", "-d"]),
    env: new Set(["-u", "-C", "-S"]),
    doas: new Set(["-u", "-C"]),
  };
  while (index < all.length) {
    const value = all[index].value;
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(value) && !all[index].quoted) {
      assignments.push(value);
      index++;
      continue;
    }
    const name = programName(value);
    if (!WRAPPERS.has(name) || all[index].quoted) break;
    wrappers.push(name);
    index++;
    while (index < all.length && all[index].value.startsWith("-")) {
      const flag = all[index].value;
      index += takesValue[name]?.has(flag) ? 2 : 1;
    }
    if (name === "timeout" && index < all.length) index++;
    while (name === "env" && index < all.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(all[index].value))
      assignments.push(all[index++].value);
  }
  return { words: all.slice(index), wrappers, assignments };
}

/** `git status`, `npm run`+script, `ls`: what an "allow for this session" remembers. */
export function commandPrefix(words: Word[], wrappers: string[]): string {
  if (words.length === 0) return wrappers.join(" ");
  const program = programName(words[0].value);
  const parts = [...wrappers.filter((w) => w === "sudo" || w === "doas"), program];
  if (SUBCOMMAND_PROGRAMS.has(program)) {
    const rest = words.slice(1).map((w) => w.value);
    let index = 0;
    if (program === "git")
      while (index < rest.length && rest[index].startsWith("-")) index += ["-C", "-c"].includes(rest[index]) ? 2 : 1;
    const sub = rest[index];
    if (sub && !sub.startsWith("-")) {
      parts.push(sub);
      if ((sub === "run" || sub === "exec") && rest[index + 1] && !rest[index + 1].startsWith("-"))
        parts.push(rest[index + 1]);
    }
  }
  return parts.join(" ");
}

export function programName(value: string): string {
  return value.includes("/") && !value.startsWith("./") && !value.startsWith("../")
    ? value.slice(value.lastIndexOf("/") + 1)
    : value;
}

/** Outside FILE_ARGUMENT_PROGRAMS, an argument counts as a path when it is shaped like one. */
export function looksLikePath(arg: string): boolean {
  if (arg.startsWith("-")) return false;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(arg)) return false;
  return arg.includes("/") || arg.startsWith("~") || arg.startsWith(".");
}

export function quoteForShell(value: string): string {
  return /^[\w@%+=:,./{}-]+$/.test(value) ? value : `'${value.replace(/'/g, "'\\''")}'`;
}
