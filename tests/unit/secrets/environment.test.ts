import { spawn } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { isSecretName, scrubEnvironment, sealSecretEnvironment } from "../../../server/secrets/environment";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const MODULE = path.join(ROOT, "server/secrets/environment.ts");

describe("which variables are secret", () => {
  it("takes every *_KEY, *_TOKEN, *_SECRET, connection URL and redaction name, and keeps the rest", () => {
    for (const name of [
      "OPENAI_API_KEY",
      "GH_TOKEN",
      "WORLDLINE_TOKENS",
      "OIDC_CLIENT_SECRET",
      "DATABASE_URL",
      "REDIS_URL",
      "MY_PASSWORD",
      "AWS_SESSION_TOKEN",
    ])
      expect(isSecretName(name), name).toBe(true);
    for (const name of ["PATH", "HOME", "SSH_AUTH_SOCK", "XAUTHORITY", "LANG", "WORLDLINE_HOME"])
      expect(isSecretName(name), name).toBe(false);
    expect(
      scrubEnvironment({ NODE_ENV: "test", PATH: "/bin", GH_TOKEN: "x", DATABASE_URL: "postgres://u:p@h/d" }),
    ).toEqual({ NODE_ENV: "test", PATH: "/bin" });
  });

  it("seals an environment object that is not the process's without touching /proc", () => {
    const env: NodeJS.ProcessEnv = { NODE_ENV: "test", PLAIN: "stays", SOME_API_KEY: "gone-value-123" };
    expect(sealSecretEnvironment(env)).toEqual({ removed: ["SOME_API_KEY"], clean: true });
    expect(env).toEqual({ NODE_ENV: "test", PLAIN: "stays" });
  });
});

/**
 * The bridge's own start-up environment (what another process of its user reads as /proc/<pid>/environ)
 * holds no secret once sealed: a process seals itself, and this one reads its block from outside.
 */
describe.skipIf(process.platform !== "linux")("a sealed process seen from outside", () => {
  it("shows no secret value in /proc/<pid>/environ, keeps every other variable, and has dropped them from process.env", async () => {
    const script =
      `import { sealSecretEnvironment } from ${JSON.stringify(MODULE)};\n` +
      `const sealed = sealSecretEnvironment();\n` +
      `process.stdout.write(JSON.stringify({ ...sealed, left: process.env.SOME_API_KEY ?? null }) + "\\n");\n` +
      `process.stdin.resume(); process.stdin.on("end", () => process.exit(0));\n`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: ROOT,
      env: {
        NODE_ENV: "test",
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        PLAIN_SETTING: "plain-value",
        SOME_API_KEY: "sk-sealed-value-0123456789",
        DATABASE_URL: "postgresql://worldline:db-password-42@db.internal/worldline",
        WORLDLINE_TOKENS: "ops=ops-token-value-abcdef",
      },
      stdio: ["pipe", "pipe", "inherit"],
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
          out += chunk;
          if (out.includes("\n")) resolve(out.trim());
        });
        child.once("exit", (code) => reject(new Error(`exited ${code} before sealing: ${out}`)));
      });
      const sealed = JSON.parse(line) as { removed: string[]; clean: boolean; left: string | null };
      expect(sealed.removed.sort()).toEqual(["DATABASE_URL", "SOME_API_KEY", "WORLDLINE_TOKENS"]);
      expect(sealed.clean).toBe(true);
      expect(sealed.left).toBeNull();
      const environ = await fs.readFile(`/proc/${child.pid}/environ`, "utf8");
      for (const value of ["sk-sealed-value-0123456789", "db-password-42", "ops-token-value-abcdef"])
        expect(environ).not.toContain(value);
      const entries = environ.split("\0").filter(Boolean);
      expect(entries).toContain("PLAIN_SETTING=plain-value");
      expect(entries).toContain("SOME_API_KEY=");
    } finally {
      child.stdin.end();
      child.kill();
    }
  });
});
