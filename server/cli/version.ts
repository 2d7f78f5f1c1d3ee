import fs from "node:fs";
import path from "node:path";
import { ROOT_DIR } from "../config/root";

/** The package's version, read without loading the bridge: `--version` answers in a few milliseconds. */
export function packageVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(ROOT_DIR, "package.json"), "utf8")) as { version: string }).version;
}
