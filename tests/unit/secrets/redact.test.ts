import { describe, expect, it } from "vitest";
import { redactKnownValues, redactSecrets, secretEnvValues } from "../../../server/secrets";

describe("redactSecrets", () => {
  it.each([
    [
      "OpenAI key",
      "export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789",
      "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789",
    ],
    ["OpenAI key in a header", 'curl -H "x-key: sk-abcdefghijklmnopqrstuvwx12345"', "sk-abcdefghijklmnopqrstuvwx12345"],
    [
      "Anthropic key",
      "key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz_0123",
      "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz_0123",
    ],
    [
      "GitHub token",
      "git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/x/y",
      "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    ],
    [
      "GitHub fine-grained token",
      "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMN",
      "github_pat_11ABCDEFG0123456789",
    ],
    ["AWS access key id", "aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"],
    [
      "AWS secret key",
      "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
      "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ],
    [
      "JWT",
      "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
      "eyJhbGciOiJIUzI1NiJ9",
    ],
    ["Bearer token", "curl -H 'Authorization: Bearer abc123def456ghi789'", "abc123def456ghi789"],
    ["URL with a password", "psql postgres://admin:hunter2secret@db.internal:5432/app", "hunter2secret"],
    ["password assignment", "mysql --password=s3cr3t-pass -u root", "s3cr3t-pass"],
    ["token assignment", "deploy TOKEN=abcd1234efgh", "abcd1234efgh"],
    ["quoted JSON secret", '{"api_key": "zzz-very-secret-zzz"}', "zzz-very-secret-zzz"],
    ["Slack token", "xoxb-123456789012-abcdefghijkl", "xoxb-123456789012"],
  ])("removes a %s", (_kind, text, secret) => {
    const redacted = redactSecrets(text);
    expect(redacted).not.toContain(secret);
    expect(redacted).toContain("[REDACTED");
  });

  it("removes a whole PEM private key block", () => {
    const pem =
      "before\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAABG5vbmUAAAAEbm9uZQ==\n-----END OPENSSH PRIVATE KEY-----\nafter";
    expect(redactSecrets(pem)).toBe("before\n[REDACTED PRIVATE KEY]\nafter");
  });

  it("keeps the user name of a URL and ordinary text", () => {
    expect(redactSecrets("git push https://me:pw12345@host/repo.git")).toBe(
      "git push https://me:[REDACTED]@host/repo.git",
    );
    expect(redactSecrets("npm test && git status")).toBe("npm test && git status");
    expect(redactSecrets("ls -la src/components")).toBe("ls -la src/components");
  });
});

describe("redactKnownValues", () => {
  it("removes exact secret values, longest first", () => {
    expect(redactKnownValues("pw=hunter22 and hunter22x", ["hunter22", "hunter22x"])).toBe(
      "pw=[REDACTED] and [REDACTED]",
    );
  });

  it("ignores values too short to redact safely", () => {
    expect(redactKnownValues("true 1 abc", ["1", "true", undefined, null])).toBe("true 1 abc");
  });
});

describe("secretEnvValues", () => {
  it("picks values of variables whose names say they are secret", () => {
    expect(
      secretEnvValues({ OPENAI_API_KEY: "sk-1", GITHUB_TOKEN: "t", HOME: "/root", DB_PASSWORD: "p" }).sort(),
    ).toEqual(["p", "sk-1", "t"]);
  });
});
