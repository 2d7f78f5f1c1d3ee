import fs from "node:fs";
import path from "node:path";

/**
 * Creates WORLDLINE_HOME and any missing parent, one folder at a time, readable by this user
 * only. Not `mkdirSync(…, { recursive: true })`: for a path where mkdir answers ENOENT although
 * the parent exists (anything under /proc), Node's recursive mkdir retries the parent forever,
 * and `worldline` spun at full CPU instead of saying the folder cannot be made.
 */
export function makeHome(home: string): void {
  const missing: string[] = [];
  for (let dir = path.resolve(home); !fs.existsSync(dir); dir = path.dirname(dir)) missing.unshift(dir);
  for (const dir of missing) fs.mkdirSync(dir, { mode: 0o700 });
}
