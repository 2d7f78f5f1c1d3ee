import * as store from "../store";

/** Contents of one file a person trusted, newest last: going back to a trusted version needs no new trust. */
const KEPT_VERSIONS = 20;

function keyOf(file: string): string {
  return `hooks.trusted:${file}`;
}

/**
 * Which contents of a workspace's hooks files people trusted, in the Setting table (so every
 * bridge of a team sees the same trust, and no schema change was needed): `hooks.trusted:<file>`
 * holds the sha256 of each trusted content.
 */
export class HookTrust {
  constructor(private readonly db: store.Db) {}

  async trusted(file: string, sha256: string): Promise<boolean> {
    const value = await store.getSetting(this.db, keyOf(file));
    return Array.isArray(value) && value.includes(sha256);
  }

  async trust(file: string, sha256: string): Promise<void> {
    const value = await store.getSetting(this.db, keyOf(file));
    const versions = Array.isArray(value) ? value.filter((sha): sha is string => typeof sha === "string") : [];
    if (versions.includes(sha256)) return;
    await store.putSetting(this.db, keyOf(file), [...versions, sha256].slice(-KEPT_VERSIONS));
  }
}
