import { spawn } from "node:child_process";
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openShadowRepo } from "../../../server/checkpoints/index.ts";
import { runThroughHelper } from "../../../server/checkpoints/git-helper.ts";
import { makeSandbox, write } from "./helpers.ts";

let box: ReturnType<typeof makeSandbox>;
beforeEach(() => {
  box = makeSandbox();
});
afterEach(() => box.cleanup());

describe("the long-lived git helper", () => {
  it("passes arguments with quotes and spaces as they are, and binary output byte for byte", async () => {
    const tricky = `it's "quoted" $HOME \`x\` ; echo no`;
    const result = await runThroughHelper(
      "test",
      {
        env: { WL_TEST: tricky },
        cwd: box.root,
        argv: ["sh", "-c", 'printf "%s|%s" "$1" "$WL_TEST"; cat', "-", tricky],
        input: Buffer.from([0, 1, 255, 10, 0]),
      },
      () => process.env,
    );
    expect(result?.code).toBe(0);
    expect(result?.stdout).toEqual(
      Buffer.concat([Buffer.from(`${tricky}|${tricky}`), Buffer.from([0, 1, 255, 10, 0])]),
    );
  });

  it("reports exit codes and stderr, and runs commands given concurrently in order", async () => {
    const results = await Promise.all(
      [0, 3, 7].map((code) =>
        runThroughHelper(
          "test",
          { env: {}, cwd: box.root, argv: ["sh", "-c", `echo err${code} >&2; exit ${code}`] },
          () => process.env,
        ),
      ),
    );
    expect(results.map((result) => [result?.code, result?.stderr])).toEqual([
      [0, "err0\n"],
      [3, "err3\n"],
      [7, "err7\n"],
    ]);
  });

  it("leaves no temp folder behind when its process is killed", async () => {
    const tmp = join(box.root, "tmp");
    mkdirSync(tmp);
    const root = fileURLToPath(new URL("../../..", import.meta.url));
    const script =
      `import { runThroughHelper } from "./server/checkpoints/git-helper.ts";\n` +
      `const result = await runThroughHelper("test", { env: {}, cwd: ${JSON.stringify(box.ws)}, argv: ["true"] }, () => process.env);\n` +
      `process.stdout.write(result.code + "\\n");\n` +
      `setInterval(() => {}, 1000);\n`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: root,
      env: { ...process.env, TMPDIR: tmp },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const helperFolders = () => readdirSync(tmp).filter((name) => name.startsWith("worldline-git-"));
    try {
      const code = await new Promise<string>((resolve, reject) => {
        child.stdout.setEncoding("utf8").once("data", (chunk: string) => resolve(chunk.trim()));
        child.once("exit", (exit) => reject(new Error(`exited ${exit} before running a command`)));
      });
      expect(code).toBe("0");
      expect(helperFolders()).toHaveLength(1); // while its process lives
    } finally {
      child.kill("SIGKILL");
    }
    // The shell sees its stdin end and removes the folder on its way out.
    const deadline = Date.now() + 5_000;
    while (helperFolders().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(helperFolders()).toEqual([]);
  });

  it("refuses what the line protocol cannot carry (a newline), so the caller spawns directly", () => {
    expect(
      runThroughHelper("test", { env: {}, cwd: box.root, argv: ["echo", "a\nb"] }, () => process.env),
    ).toBeUndefined();
  });
});

describe("snapshots without git calls when nothing changed", () => {
  it("still sees a change another handle on the same workspace captured in between", async () => {
    write(box.ws, "a.txt", "one\n");
    const first = await openShadowRepo(box.ws, { home: box.home });
    const other = await openShadowRepo(box.ws, { home: box.home });
    const base = await first.snapshot();
    expect((await first.snapshot()).commit).toBe(base.commit); // nothing changed: same commit
    write(box.ws, "a.txt", "two\n");
    const byOther = await other.snapshot();
    expect(byOther.commit).not.toBe(base.commit);
    // `first` cached the head and the tree of its index; both moved under it.
    const again = await first.snapshot();
    expect(again.commit).toBe(byOther.commit);
    write(box.ws, "b.txt", "new\n");
    const next = await first.snapshot();
    expect(next.changed.map((change) => change.path)).toEqual(["b.txt"]);
    expect((await first.diff(base.commit, next.commit)).files.map((file) => file.path).sort()).toEqual([
      "a.txt",
      "b.txt",
    ]);
  });
});
