import fs from "node:fs/promises";
import path from "node:path";
import { readTextOrNull } from "../stat-or-null";

/**
 * API keys live in one file under WORLDLINE_HOME with mode 0600, never in the
 * database (which may be copied or shared) and never sent to the browser.
 */
export class KeyFile {
  private readonly file: string;

  constructor(home: string) {
    this.file = path.join(home, "provider-keys.json");
  }

  async all(): Promise<Record<string, string>> {
    // Unreadable (EACCES, EIO) is thrown: read as empty, the next `set` would overwrite every key.
    const text = (await readTextOrNull(this.file)) ?? "{}";
    try {
      return JSON.parse(text) as Record<string, string>;
    } catch {
      return {}; // a corrupt file means no keys; the settings page shows that
    }
  }

  async get(providerId: string): Promise<string | undefined> {
    return (await this.all())[providerId];
  }

  async set(providerId: string, key: string | null): Promise<void> {
    const keys = await this.all();
    if (key) keys[providerId] = key;
    else delete keys[providerId];
    await fs.mkdir(path.dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    await fs.writeFile(tmp, JSON.stringify(keys, null, 2), { mode: 0o600 });
    await fs.rename(tmp, this.file);
    await fs.chmod(this.file, 0o600);
  }
}

/** "sk-…a1b2": enough to recognise a key, not enough to use it. */
export function keyHint(key: string | undefined): string | null {
  if (!key) return null;
  return key.length <= 8 ? "…" : `${key.slice(0, 3)}…${key.slice(-4)}`;
}
