import { promises as fs } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { unifiedDiff } from "../../../server/diff";
import { builtinTools } from "../../../server/tools";
import { READ_MAX_LINE_CHARS } from "../../../server/tools/read-file";
import { fakeCtx, makeWorkspace, write } from "./support";

let env: Awaited<ReturnType<typeof makeWorkspace>>;
beforeEach(async () => {
  env = await makeWorkspace();
});
afterEach(async () => env.cleanup());

const tool = (name: string) => builtinTools().find((t) => t.name === name)!;
const run = (name: string, args: unknown) => tool(name).run(args, fakeCtx(env.ws));

describe("read_file", () => {
  it("returns numbered lines", async () => {
    await write(path.join(env.ws, "a.txt"), "one\ntwo\nthree\n");
    expect(await run("read_file", { path: "a.txt" })).toEqual({
      isError: false,
      output: "     1\tone\n     2\ttwo\n     3\tthree",
    });
  });

  it("pages with offset and limit and says how to continue", async () => {
    await write(path.join(env.ws, "a.txt"), Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n"));
    const result = await run("read_file", { path: "a.txt", offset: 3, limit: 2 });
    expect(result.output).toBe(
      "     3\tline 3\n     4\tline 4\n[showing lines 3-4 of 10; call read_file with offset=5 to continue]",
    );
  });

  it("cuts very long lines with a note", async () => {
    await write(path.join(env.ws, "min.js"), "x".repeat(READ_MAX_LINE_CHARS + 50));
    expect((await run("read_file", { path: "min.js" })).output).toMatch(/\[line truncated: 50 more characters\]$/);
  });

  it("caps the total size of one read", async () => {
    await write(path.join(env.ws, "big.txt"), Array.from({ length: 1500 }, () => "y".repeat(100)).join("\n"));
    const result = await run("read_file", { path: "big.txt" });
    expect(result.output.length).toBeLessThan(50_000);
    expect(result.output).toMatch(/call read_file with offset=\d+ to continue\]$/);
  });

  it("refuses binary files with a clear message", async () => {
    await write(path.join(env.ws, "blob.dat2"), Buffer.from([0x89, 0x50, 0x00, 0x01, 0x02]));
    const result = await run("read_file", { path: "blob.dat2" });
    expect(result).toMatchObject({ isError: true });
    expect(result.output).toMatch(/binary file/);
  });

  it("reads non-UTF-8 files as Latin-1 and says so", async () => {
    await write(path.join(env.ws, "latin.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    const result = await run("read_file", { path: "latin.txt" });
    expect(result.output).toContain("café");
    expect(result.output).toMatch(/not valid UTF-8/);
  });

  it("explains missing files, directories, empty files and offsets past the end", async () => {
    expect((await run("read_file", { path: "nope.txt" })).output).toMatch(/File not found: nope.txt/);
    await fs.mkdir(path.join(env.ws, "dir"));
    expect((await run("read_file", { path: "dir" })).output).toMatch(/is a directory/);
    await write(path.join(env.ws, "empty.txt"), "");
    expect((await run("read_file", { path: "empty.txt" })).output).toBe("empty.txt is empty.");
    await write(path.join(env.ws, "short.txt"), "a\n");
    expect((await run("read_file", { path: "short.txt", offset: 9 })).output).toMatch(/offset 9 is past the end/);
  });
});

describe("write_file", () => {
  it("creates parent folders", async () => {
    const result = await run("write_file", { path: "deep/er/file.ts", content: "export {};\n" });
    expect(result).toMatchObject({ isError: false, output: "Created deep/er/file.ts (11 bytes)." });
    expect(await fs.readFile(path.join(env.ws, "deep/er/file.ts"), "utf8")).toBe("export {};\n");
  });

  it("asks with a unified diff of what would change", async () => {
    await write(path.join(env.ws, "a.txt"), "one\ntwo\n");
    const need = await tool("write_file").needsApproval({ path: "a.txt", content: "one\nTWO\n" }, fakeCtx(env.ws));
    expect(need.level).toBe("ask");
    expect(need.diff).toBe("--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n");
  });
});

describe("str_replace", () => {
  beforeEach(async () => {
    await write(path.join(env.ws, "code.ts"), "const a = 1;\nconst b = 2;\nconst a2 = 1;\n");
  });

  it("applies several exact edits in order", async () => {
    const result = await run("str_replace", {
      path: "code.ts",
      edits: [
        { old_text: "const b = 2;", new_text: "const b = 3;" },
        { old_text: "const a2", new_text: "const c" },
      ],
    });
    expect(result).toMatchObject({ isError: false, output: "Edited code.ts (2 edits applied)." });
    expect(await fs.readFile(path.join(env.ws, "code.ts"), "utf8")).toBe("const a = 1;\nconst b = 3;\nconst c = 1;\n");
  });

  it("fails clearly when the old text is missing, and changes nothing", async () => {
    const result = await run("str_replace", {
      path: "code.ts",
      edits: [
        { old_text: "const b = 2;", new_text: "X" },
        { old_text: "const z", new_text: "Y" },
      ],
    });
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(/Edit 2: old_text was not found/);
    expect(await fs.readFile(path.join(env.ws, "code.ts"), "utf8")).toContain("const b = 2;");
  });

  it("fails clearly when the old text is ambiguous, naming the lines", async () => {
    const result = await run("str_replace", { path: "code.ts", edits: [{ old_text: "= 1;", new_text: "= 9;" }] });
    expect(result.output).toMatch(/occurs 2 times \(lines 1, 3\)/);
  });

  it("replaces every occurrence with replace_all", async () => {
    await run("str_replace", { path: "code.ts", edits: [{ old_text: "= 1;", new_text: "= 9;", replace_all: true }] });
    expect(await fs.readFile(path.join(env.ws, "code.ts"), "utf8")).toBe("const a = 9;\nconst b = 2;\nconst a2 = 9;\n");
  });

  it("matches LF text in a CRLF file and keeps CRLF", async () => {
    await write(path.join(env.ws, "win.txt"), "a\r\nb\r\nc\r\n");
    await run("str_replace", { path: "win.txt", edits: [{ old_text: "a\nb", new_text: "A\nB" }] });
    expect(await fs.readFile(path.join(env.ws, "win.txt"), "utf8")).toBe("A\r\nB\r\nc\r\n");
  });

  it("refuses empty old text and points to write_file", async () => {
    expect((await run("str_replace", { path: "code.ts", edits: [{ old_text: "", new_text: "x" }] })).output).toMatch(
      /use write_file/,
    );
  });

  it("needs an ask-level approval with the diff", async () => {
    const need = await tool("str_replace").needsApproval(
      { path: "code.ts", edits: [{ old_text: "const b = 2;", new_text: "const b = 4;" }] },
      fakeCtx(env.ws),
    );
    expect(need.level).toBe("ask");
    expect(need.diff).toContain("-const b = 2;\n+const b = 4;\n");
  });
});

describe("list_dir", () => {
  it("lists folders first with sizes, and nested levels with depth", async () => {
    await write(path.join(env.ws, "b.txt"), "12345");
    await write(path.join(env.ws, "src/index.ts"), "x");
    await write(path.join(env.ws, ".hidden"), "");
    expect((await run("list_dir", {})).output).toBe("(workspace root)/\nsrc/\n.hidden (0 B)\nb.txt (5 B)");
    expect((await run("list_dir", { depth: 2 })).output).toContain("src/\n  index.ts (1 B)");
  });
});

describe("glob", () => {
  it("finds files by pattern, newest first, skipping ignored and secret files", async () => {
    await write(path.join(env.ws, "src/old.ts"), "");
    await fs.utimes(path.join(env.ws, "src/old.ts"), new Date(2000, 1, 1), new Date(2000, 1, 1));
    await write(path.join(env.ws, "src/new.ts"), "");
    await write(path.join(env.ws, "dist/out.ts"), "");
    await write(path.join(env.ws, "node_modules/x/index.ts"), "");
    await write(path.join(env.ws, ".gitignore"), "dist/\n");
    await write(path.join(env.ws, "src/.env.ts"), "");
    expect((await run("glob", { pattern: "**/*.ts" })).output).toBe("src/new.ts\nsrc/old.ts");
  });

  it("says so when nothing matches", async () => {
    expect((await run("glob", { pattern: "*.py" })).output).toMatch(/No files match/);
  });
});

describe("unifiedDiff", () => {
  it("shows a new file against /dev/null", () => {
    expect(unifiedDiff("n.txt", "", "a\nb\n")).toBe("--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n");
  });

  it("splits distant changes into separate hunks with three lines of context", () => {
    const before = Array.from({ length: 20 }, (_, i) => `l${i + 1}`).join("\n") + "\n";
    const after = before.replace("l2\n", "L2\n").replace("l19\n", "L19\n");
    const diff = unifiedDiff("f", before, after);
    expect(diff.match(/^@@/gm)).toHaveLength(2);
    expect(diff).toContain("@@ -1,5 +1,5 @@\n l1\n-l2\n+L2\n l3\n l4\n l5\n");
  });
});
