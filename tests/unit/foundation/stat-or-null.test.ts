import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { lstatOrNull, readTextOrNull, statOrNull } from "../../../server/stat-or-null";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "wl-stat-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("statOrNull", () => {
  it("is null for a path that is not there, or whose parent is a file", async () => {
    fs.writeFileSync(path.join(dir, "file"), "x");
    expect(await statOrNull(path.join(dir, "missing"))).toBeNull();
    expect(await statOrNull(path.join(dir, "file", "child"))).toBeNull();
    expect((await statOrNull(path.join(dir, "file")))?.isFile()).toBe(true);
  });

  it("reports any other failure instead of passing it for a missing file", async () => {
    fs.symlinkSync("loop-b", path.join(dir, "loop-a"));
    fs.symlinkSync("loop-a", path.join(dir, "loop-b"));
    await expect(statOrNull(path.join(dir, "loop-a"))).rejects.toMatchObject({ code: "ELOOP" });
    expect((await lstatOrNull(path.join(dir, "loop-a")))?.isSymbolicLink()).toBe(true);
  });
});

describe("readTextOrNull", () => {
  it("is null for a missing file and throws on one it cannot read", async () => {
    fs.writeFileSync(path.join(dir, "text"), "hello");
    expect(await readTextOrNull(path.join(dir, "text"))).toBe("hello");
    expect(await readTextOrNull(path.join(dir, "absent"))).toBeNull();
    fs.mkdirSync(path.join(dir, "folder"));
    await expect(readTextOrNull(path.join(dir, "folder"))).rejects.toMatchObject({ code: "EISDIR" });
  });
});
