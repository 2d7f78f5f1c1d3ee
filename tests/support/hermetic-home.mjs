// Tests run the shells they open (terminals, shell tools) with an empty HOME of their own.
// The user's profile scripts are not ours to test, and some block: a pyenv rehash killed
// mid-way (as tests kill shells) leaves a lock that stalls every later login shell for 60 s.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** Points HOME at a fresh empty directory (once per process tree) and returns it. */
export function useHermeticHome() {
  if (process.env.WL_TEST_HOME) return process.env.WL_TEST_HOME;
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "wl-test-home-"));
  process.env.WL_TEST_HOME = home;
  process.env.HOME = home;
  return home;
}
