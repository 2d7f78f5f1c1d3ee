import fs from "node:fs/promises";
import path from "node:path";
import * as z from "zod";
import * as store from "../store";

/** The bridge's VAPID key pair (RFC 8292): push services accept pushes signed with the key a browser subscribed to. */
export const VapidKeys = z.object({ publicKey: z.string().min(1), privateKey: z.string().min(1) });
export type VapidKeys = z.infer<typeof VapidKeys>;

/** Where the pair is kept in WORLDLINE_HOME (0600: the private key signs every push). */
const KEY_FILE = path.join("push", "vapid.json");
/** Team mode: the deployment's pair, so a subscription made through one bridge is pushed by any. */
const TEAM_SETTING = "push.vapid";

/**
 * The pair made once with web-push and kept in WORLDLINE_HOME. Bridges of one deployment (team
 * mode, each with its own home) adopt the first bridge's pair from the shared store.
 */
export async function loadVapidKeys(home: string, db: store.Db, team: boolean): Promise<VapidKeys> {
  const file = path.join(home, KEY_FILE);
  const kept = await readKeys(file);
  // web-push loads only to make the pair, once: a bridge with its keys starts without it.
  const candidate = kept ?? (await import("web-push")).default.generateVAPIDKeys();
  const keys = team ? VapidKeys.parse(await store.settingOnce(db, TEAM_SETTING, candidate)) : candidate;
  if (!kept || kept.privateKey !== keys.privateKey) await writeKeys(file, keys);
  return keys;
}

async function readKeys(file: string): Promise<VapidKeys | null> {
  try {
    return VapidKeys.parse(JSON.parse(await fs.readFile(file, "utf8")));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

async function writeKeys(file: string, keys: VapidKeys): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const partial = `${file}.${process.pid}.tmp`;
  await fs.writeFile(partial, JSON.stringify(keys), { mode: 0o600 });
  await fs.rename(partial, file);
}
