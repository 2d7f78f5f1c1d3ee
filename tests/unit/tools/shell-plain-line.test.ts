import { beforeAll, describe, expect, it } from "vitest";
import { parseShell, plainLine, shellParser, type ShellParser } from "../../../server/tools/shell/parse";
import { rng } from "../../support/rng";

// A plain line (one command of literal words) is read without the grammar; the classifier must see
// exactly what the grammar would have given it (server/tools/shell/parse.ts, plainLine).
let grammar: ShellParser;
beforeAll(async () => {
  grammar = await shellParser();
});

const FIRST = "abcxyzABZ019_./:-";
const LATER = `${FIRST}=@%+,`;

function word(random: () => number, alphabet: string): string {
  const length = 1 + Math.floor(random() * 8);
  let text = "";
  for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)];
  return text;
}

describe("plain shell lines", () => {
  it.each([
    "ls",
    "echo hi",
    "ls -la",
    "git status",
    "git log --oneline -5",
    "npm test",
    "npm run build -- --mode=production",
    "cat src/a.ts",
    "./configure --prefix=/usr/local",
    "rm -rf build",
    "sed -i s/a/b/ file.txt",
    "python3 -m pytest tests/unit -k name",
    "curl https://example.com/a:b@c",
    "git push --force",
    "sudo rm x",
    "grep -rn foo src",
    "node -v",
    "test -f a",
    "env",
    "1",
  ])("%s reads as the grammar reads it", async (line) => {
    expect(plainLine(line)).toEqual(grammar.parse(line));
    expect((await parseShell(line)).commands).toHaveLength(1);
  });

  it("3,000 generated lines of literal words read as the grammar reads them", () => {
    const random = rng(47);
    let read = 0;
    for (let i = 0; i < 3000; i++) {
      const words = [word(random, FIRST)];
      const more = Math.floor(random() * 6);
      for (let j = 0; j < more; j++) words.push(word(random, LATER));
      const line = words.join(" ");
      const plain = plainLine(line);
      // A word that starts with `=` is left to the grammar (it reads `==` as an error).
      if (!plain) {
        expect(words.slice(1).some((w) => w.startsWith("=")) || /^[-:]/.test(line)).toBe(true);
        continue;
      }
      read++;
      expect(plain, line).toEqual(grammar.parse(line));
    }
    expect(read).toBeGreaterThan(2000);
  });

  it.each([
    "echo 'hi'",
    'echo "$HOME"',
    "echo $HOME",
    "ls *.ts",
    "ls ~",
    "ls # comment",
    "a && b",
    "a; b",
    "a | b",
    "echo > f",
    "echo hi\nrm -rf x",
    "FOO=1 npm test",
    "export FOO=1",
    "unset FOO",
    "declare -x A",
    "if true",
    "time make",
    "ls  -la",
    " ls",
    "ls ",
    "ls\t-la",
    "echo \\x",
    "echo a{b,c}",
    "[ -f a ]",
    "echo `id`",
    "echo $(id)",
    "ls !x",
    "f() x",
  ])("%j goes to the grammar", async (line) => {
    expect(plainLine(line)).toBeUndefined();
    expect(await parseShell(line)).toEqual(grammar.parse(line));
  });
});
