import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGrepTool } from "../../../server/tools";
import { findRipgrep } from "../../../server/host/search/ripgrep";
import { fakeCtx, makeWorkspace, write } from "./support";

let env: Awaited<ReturnType<typeof makeWorkspace>>;
beforeAll(async () => {
  env = await makeWorkspace();
  await write(
    path.join(env.ws, "src/a.ts"),
    "import x from 'y';\n\nfunction handleClick() {\n  return 1;\n}\n\nexport function handleKey() {}\n",
  );
  await write(path.join(env.ws, "src/b.test.ts"), "handleClick();\n");
  await write(path.join(env.ws, "docs/notes.md"), "TODO: handle things\nnothing\nFIXME later\n");
  await write(path.join(env.ws, "dist/bundle.js"), "function handleClick(){}\n");
  await write(path.join(env.ws, ".gitignore"), "dist/\n");
  await write(path.join(env.ws, ".env"), "handle_SECRET=1\n");
  await write(path.join(env.ws, "img.bin"), Buffer.from([0x68, 0x61, 0x6e, 0x64, 0x6c, 0x65, 0x00, 0x01]));
  await write(path.join(env.ws, "node_modules/lib/index.js"), "handleClick\n");
});
afterAll(async () => env.cleanup());

const rg = findRipgrep();
const backends: Array<[string, string | null]> = [["JavaScript fallback", null]];
if (rg) backends.push(["ripgrep", rg]);

describe.each(backends)("grep with the %s", (_name, ripgrep) => {
  const grep = createGrepTool({ ripgrep });
  const run = (args: Record<string, unknown>) => grep.run(args, fakeCtx(env.ws));

  it("prints path:line:text for matches, skipping ignored, binary, node_modules and secret files", async () => {
    expect((await run({ pattern: "handle" })).output).toBe(
      "docs/notes.md:1:TODO: handle things\nsrc/a.ts:3:function handleClick() {\nsrc/a.ts:7:export function handleKey() {}\nsrc/b.test.ts:1:handleClick();",
    );
  });

  it("shows context lines with - and separates groups with --", async () => {
    expect((await run({ pattern: "handle", path: "src/a.ts", context: 1 })).output).toBe(
      "src/a.ts-2-\nsrc/a.ts:3:function handleClick() {\nsrc/a.ts-4-  return 1;\n--\nsrc/a.ts-6-\nsrc/a.ts:7:export function handleKey() {}",
    );
  });

  it("filters by include and exclude globs", async () => {
    expect((await run({ pattern: "handle", include: ["*.ts"], exclude: ["*.test.ts"] })).output).toBe(
      "src/a.ts:3:function handleClick() {\nsrc/a.ts:7:export function handleKey() {}",
    );
    expect((await run({ pattern: "handle", exclude: ["src"] })).output).toBe("docs/notes.md:1:TODO: handle things");
  });

  it("matches regular expressions, case-insensitively when asked", async () => {
    expect((await run({ pattern: "todo|fixme", ignore_case: true })).output).toBe(
      "docs/notes.md:1:TODO: handle things\ndocs/notes.md:3:FIXME later",
    );
  });

  it("caps the number of results with a note", async () => {
    expect((await run({ pattern: "handle", max_results: 2 })).output).toBe(
      "docs/notes.md:1:TODO: handle things\nsrc/a.ts:3:function handleClick() {\n[results truncated at 2 matching lines; narrow the pattern, path or globs, or raise max_results]",
    );
  });

  it("lists only file names with files_only", async () => {
    expect((await run({ pattern: "handleClick", files_only: true })).output).toBe("src/a.ts\nsrc/b.test.ts");
  });

  it("says when nothing matches, and reports a bad regex as an error result", async () => {
    expect((await run({ pattern: "zzz_nothing" })).output).toBe("No matches for zzz_nothing.");
    const bad = await run({ pattern: "(unclosed" });
    expect(bad.isError).toBe(true);
  });
});

// Skipped when `rg` is not on PATH (it is not installed on the build machine;
// the npm package that ships it downloads a binary, which is blocked there).
// Verified with Debian's ripgrep 13 unpacked privately:
//   apt-get download ripgrep && dpkg -x ripgrep_*.deb /tmp/rg
//   PATH=/tmp/rg/usr/bin:$PATH npx vitest run tests/unit/tools/grep.test.ts
// Then every test above also runs against ripgrep, and this block checks the
// two back ends print byte-for-byte the same.
describe.skipIf(!rg)("grep back ends agree", () => {
  it("ripgrep and the JavaScript fallback print exactly the same", async () => {
    const js = createGrepTool({ ripgrep: null });
    const native = createGrepTool({ ripgrep: rg ?? null });
    for (const args of [
      { pattern: "handle", context: 2 },
      { pattern: "e", max_results: 5 },
      { pattern: "x", include: ["src/**"] },
    ]) {
      expect((await native.run(args, fakeCtx(env.ws))).output).toBe((await js.run(args, fakeCtx(env.ws))).output);
    }
  });
});
