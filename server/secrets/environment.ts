import fs from "node:fs";
import { holdSecretValues, SECRET_ENV_NAME } from "./redact";

/**
 * The bridge's secrets and the environment of what it starts (SECURITY.md, "What a terminal
 * reaches"). Terminals, shell tools, MCP servers and external agents get `scrubEnvironment(…)`;
 * the bridge itself drops the secrets from its own environment once its configuration is read
 * (`sealSecretEnvironment`), so a child reading `/proc/$PPID/environ` finds none.
 */

/** Names that read like a secret but are not one, and that shells rely on (ssh-agent, X). */
const NOT_SECRETS = new Set(["SSH_AUTH_SOCK", "XAUTHORITY"]);
/** Connection strings that carry a password without saying so in their name. */
const SECRET_NAMES = new Set(["DATABASE_URL", "REDIS_URL", "WORLDLINE_TOKEN", "WORLDLINE_TOKENS"]);
const SECRET_SUFFIX = /_(KEY|TOKEN|TOKENS|SECRET)$/i;

/** WORLDLINE_SCRUB_ENV's names (server/config), added at start-up. */
const configured = new Set<string>();

export function addSecretNames(names: Iterable<string>): void {
  for (const name of names) configured.add(name);
}

/** True for a variable no child of the bridge may see. */
export function isSecretName(name: string): boolean {
  if (NOT_SECRETS.has(name) && !configured.has(name)) return false;
  return SECRET_NAMES.has(name) || configured.has(name) || SECRET_SUFFIX.test(name) || SECRET_ENV_NAME.test(name);
}

/** `env` without any secret: the one environment every spawn path starts its child with. */
export function scrubEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined && !isSecretName(name)) result[name] = value;
  return result;
}

/**
 * Removes every secret variable from this process's environment: from `process.env` (what Node
 * and the children it starts see) and from the environment block the kernel shows as
 * `/proc/<pid>/environ`, which `delete process.env.X` leaves as it was at exec. Call once the
 * configuration is read: nothing reads a secret from `process.env` after that. Returns whether the
 * kernel's copy is clean too (false where there is no /proc, or it refused the write).
 */
export function sealSecretEnvironment(env: NodeJS.ProcessEnv = process.env): { removed: string[]; clean: boolean } {
  const removed = Object.keys(env).filter((name) => env[name] && isSecretName(name));
  holdSecretValues(removed.map((name) => env[name]!));
  for (const name of removed) delete env[name];
  return { removed, clean: env === process.env ? wipeExecEnvironment() : true };
}

/**
 * Overwrites the values of secret variables in the environment block the process was started with
 * (between `env_start` and `env_end` of /proc/self/stat, fields 50 and 51), which is what another
 * process of the same user reads as /proc/<pid>/environ. The block is this process's own memory;
 * libc's `environ` no longer points into the wiped entries once `process.env` has dropped them.
 *
 * Why this and not a supported API: Linux has none that an unprivileged process can use to change
 * what /proc/<pid>/environ shows (`prctl(PR_SET_MM_ENV_START/END)` needs CAP_SYS_RESOURCE), and
 * Node cannot exec itself again with another environment. The designs that avoid it do not hold:
 * - terminals started by a helper process (so their parent is not the bridge) still reach the
 *   bridge: /proc/<pid>/environ is readable by every process of the same user (a read, which Yama's
 *   ptrace_scope does not restrict), and `ps` names the bridge's pid;
 * - a launcher that starts the bridge without the secrets and hands them over a pipe keeps them in
 *   its own start-up block, with the same problem one pid up, unless it exits (which a foreground
 *   `worldline serve`, `run` or `acp` cannot: stdio, signals and the exit code go through it).
 * So the bridge clears its own block. It writes only inside that block, only zeros, only over values
 * of names `isSecretName` picks, and checks the result; where any step fails it says so at start-up.
 * Tests: tests/unit/secrets/environment.test.ts (a sealed process read from outside),
 * tests/integration/security/terminal-env.test.ts (a terminal reading /proc/$PPID/environ).
 */
function wipeExecEnvironment(): boolean {
  let fd: number | undefined;
  try {
    const stat = fs.readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Field 3 (state) is fields[0]: env_start (50) and env_end (51) are fields[47] and fields[48].
    const start = Number(fields[47]);
    const end = Number(fields[48]);
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end <= start) return false;
    fd = fs.openSync("/proc/self/mem", "r+");
    const block = Buffer.alloc(end - start);
    fs.readSync(fd, block, 0, block.length, start);
    for (let at = 0; at < block.length;) {
      const stop = block.indexOf(0, at);
      const entryEnd = stop === -1 ? block.length : stop;
      const equals = block.indexOf(0x3d, at);
      if (equals !== -1 && equals < entryEnd && isSecretName(block.toString("utf8", at, equals))) {
        const zeros = Buffer.alloc(entryEnd - equals - 1);
        if (zeros.length > 0) fs.writeSync(fd, zeros, 0, zeros.length, start + equals + 1);
      }
      at = entryEnd + 1;
    }
    return !fs
      .readFileSync("/proc/self/environ", "utf8")
      .split("\0")
      .some((entry) => entry.includes("=") && isSecretName(entry.slice(0, entry.indexOf("="))) && !entry.endsWith("="));
  } catch {
    // No /proc (macOS), or a kernel that refuses writes to /proc/self/mem: the caller warns.
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
