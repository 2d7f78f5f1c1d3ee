import type { Server as HttpServer } from "node:http";
import path from "node:path";
import { Server, type Socket } from "socket.io";
import { errorMessage, isWorldlineError, WorldlineError } from "../errors";
import type { WorkspaceHost } from "../host";
import { RUNNER_SOCKET_PATH, RunnerHello, RunnerName, type RunnerView, type RunnerWelcome } from "../protocol";
import * as store from "../store";
import { LAST_SEEN_EVERY_MS, REVOCATION_CHECK_MS, RUNNER_GRACE_MS, RUNNER_MAX_FRAME_BYTES } from "./limits";
import { RunnerLink } from "./link";
import { RemoteFiles, type FilesPort } from "./remote-files";
import { RemoteHost } from "./remote-host";
import { remotePtyOpener } from "./remote-pty";
import type { PtyOpener } from "../pty";
import { ENROLLMENT_TTL_MS, hashSecret, newCredential, newEnrollmentToken } from "./secrets";

export interface RunnerHubOptions {
  db: store.Db;
  /** How long calls wait for a runner that went away (default RUNNER_GRACE_MS, or WORLDLINE_RUNNER_GRACE_MS). */
  graceMs?: number;
  /**
   * The fencing epoch sent with every request. Until the owner's per-session epoch exists
   * (server/leases), this process's start time: a bridge started later outranks an earlier one.
   */
  epoch?: () => number;
  log?: (line: string) => void;
}

/** Who a handshake turned out to be. */
interface Admitted {
  name: string;
  roots: string[];
  instance: string;
  /** Set right after an enrollment: sent once in the welcome, never stored. */
  credential?: string;
}

/**
 * The hub's side of runners: enrollment (`runners add`), the `/runner.io` socket.io server
 * runners dial, one RunnerLink per runner, and a WorkspaceHost per runner session.
 */
export class RunnerHub {
  private readonly links = new Map<string, RunnerLink>();
  private readonly db: store.Db;
  private readonly graceMs: number;
  private readonly epoch: () => number;
  private readonly log: (line: string) => void;
  private io: Server | null = null;
  private timers: NodeJS.Timeout[] = [];
  private readonly fileListeners = new Set<(runner: string, root: string, paths: string[]) => void>();

  constructor(options: RunnerHubOptions) {
    this.db = options.db;
    this.graceMs = options.graceMs ?? envMs("WORLDLINE_RUNNER_GRACE_MS") ?? RUNNER_GRACE_MS;
    const started = Date.now();
    this.epoch = options.epoch ?? (() => started);
    this.log = options.log ?? ((line) => process.stderr.write(`[worldline] ${line}\n`));
  }

  /** Starts serving runners on the bridge's own port, apart from the UI's socket.io. */
  attach(httpServer: HttpServer): void {
    const io = new Server(httpServer, {
      path: RUNNER_SOCKET_PATH,
      serveClient: false,
      transports: ["websocket"],
      perMessageDeflate: false,
      maxHttpBufferSize: RUNNER_MAX_FRAME_BYTES,
      // Only this server answers its path; the UI's must not close these upgrades.
      destroyUpgrade: false,
    });
    io.use((socket, next) => {
      this.admit(socket).then(
        (admitted) => {
          socket.data.runner = admitted;
          next();
        },
        (error: unknown) => {
          // The code travels in the message: the runner tells a refusal for good from a passing failure by it.
          const reason = isWorldlineError(error) ? `${error.code}: ${error.message}` : errorMessage(error);
          this.log(`runner connection refused: ${reason}`);
          next(new Error(reason));
        },
      );
    });
    io.on("connection", (socket) => this.connected(socket, socket.data.runner as Admitted));
    io.engine.on("connection_error", (error: { message?: string }) =>
      this.log(`runner connection error: ${error.message ?? "unknown"}`),
    );
    this.io = io;
    this.timers = [
      setInterval(() => void this.dropRevoked(), REVOCATION_CHECK_MS),
      setInterval(() => void this.markSeen(), LAST_SEEN_EVERY_MS),
    ];
    for (const timer of this.timers) timer.unref();
  }

  /** `runners add`: a new runner (or a new token for one), returning the one-time token. */
  async add(name: string, allowedRoots: string[] = []): Promise<string> {
    const parsed = RunnerName.safeParse(name);
    if (!parsed.success)
      throw new WorldlineError("runner:invalid", `Runner name "${name}": ${parsed.error.issues[0]?.message}.`);
    for (const root of allowedRoots)
      if (!path.isAbsolute(root)) throw new WorldlineError("runner:invalid", `--root ${root}: give an absolute path.`);
    const token = newEnrollmentToken();
    await store.addRunner(this.db, {
      name,
      enrollHash: hashSecret(token),
      enrollExpiresAt: new Date(Date.now() + ENROLLMENT_TTL_MS),
      allowedRoots: allowedRoots.map((root) => path.resolve(root)),
    });
    return token;
  }

  async list(): Promise<RunnerView[]> {
    const rows = await store.listRunners(this.db);
    return rows.map((row) => ({
      name: row.name,
      connected: this.links.get(row.name)?.connected ?? false,
      roots: parseRoots(row.roots),
      last_seen: row.lastSeenAt?.toISOString() ?? null,
    }));
  }

  /** Revokes a runner and disconnects it at once; its waiting calls fail. */
  async revoke(name: string): Promise<boolean> {
    const revoked = await store.revokeRunner(this.db, name);
    this.drop(name, "revoked");
    return revoked;
  }

  /** The host of a session on a runner. */
  hostFor(runner: string, sessionId?: string): WorkspaceHost {
    return new RemoteHost(this.link(runner), sessionId);
  }

  /** Changes the runners' file tree watchers saw (for `files.changed` to the tabs following those sessions). */
  onFilesChanged(listener: (runner: string, root: string, paths: string[]) => void): () => void {
    this.fileListeners.add(listener);
    return () => this.fileListeners.delete(listener);
  }

  /** How a terminal of a session on a runner opens its shell there. */
  ptyOpenerFor(runner: string, sessionId: string): PtyOpener {
    return remotePtyOpener(this.link(runner), sessionId, this.log);
  }

  /** The IDE's file views of a session on a runner (tree, editor, search, git markers). */
  filesFor(runner: string): FilesPort {
    return new RemoteFiles(this.link(runner));
  }

  /** A folder for a new session: an existing directory under one of the runner's roots, as the runner sees it. */
  async checkWorkspace(runner: string, workspace: string): Promise<string> {
    await this.requireKnown(runner);
    const { path: real } = await this.link(runner).call({ op: "checkWorkspace", path: workspace }, { now: true });
    return real;
  }

  /** The folder picker on a runner's machine. */
  async listFolders(runner: string, folder?: string) {
    await this.requireKnown(runner);
    return this.link(runner).call({ op: "listFolders", ...(folder ? { path: folder } : {}) }, { now: true });
  }

  close(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    for (const link of this.links.values()) link.close(new WorldlineError("runner:gone", "The hub is shutting down."));
    this.links.clear();
    const io = this.io;
    this.io = null;
    return new Promise((resolve) => (io ? io.close(() => resolve()) : resolve()));
  }

  private link(name: string): RunnerLink {
    let link = this.links.get(name);
    if (!link) {
      link = new RunnerLink(name, {
        graceMs: this.graceMs,
        epoch: this.epoch,
        log: this.log,
        filesChanged: (root, paths) => {
          for (const listener of this.fileListeners) listener(name, root, paths);
        },
      });
      this.links.set(name, link);
    }
    return link;
  }

  private async requireKnown(name: string): Promise<void> {
    const row = await store.getRunner(this.db, name);
    if (!row || row.revokedAt) throw new WorldlineError("runner:not_found", `No runner named "${name}".`);
  }

  /** The handshake: a valid token (exchanged now) or credential, and roots the runner may offer. */
  private async admit(socket: Socket): Promise<Admitted> {
    const hello = RunnerHello.safeParse(socket.handshake.auth);
    if (!hello.success) throw new WorldlineError("runner:bad_hello", "malformed handshake");
    const { token, credential, roots, instance } = hello.data;
    let row: store.RunnerRow | null;
    let issued: string | undefined;
    if (token) {
      row = await store.findRunnerByEnrollHash(this.db, hashSecret(token));
      if (!row || row.revokedAt || !row.enrollExpiresAt || row.enrollExpiresAt < new Date())
        throw new WorldlineError("runner:bad_token", "unknown, used or expired enrollment token");
      if (hello.data.name && hello.data.name !== row.name)
        throw new WorldlineError("runner:bad_token", `the token is for "${row.name}", not "${hello.data.name}"`);
      issued = newCredential();
      if (!(await store.exchangeEnrollment(this.db, row.id, row.enrollHash!, hashSecret(issued))))
        throw new WorldlineError("runner:bad_token", "the enrollment token was used meanwhile");
    } else {
      row = await store.findRunnerByCredentialHash(this.db, hashSecret(credential!));
      // A revoked runner's credential, or one replaced by a new enrollment, matches no row.
      if (!row || row.revokedAt) throw new WorldlineError("runner:bad_credential", "unknown or revoked credential");
    }
    const allowed = parseRoots(row.allowedRoots);
    const claimed = roots.find((root) => allowed.length > 0 && !allowed.some((pin) => within(pin, root)));
    if (claimed)
      throw new WorldlineError(
        "runner:root_refused",
        `runner "${row.name}" claims ${claimed}, outside the roots it was given`,
      );
    return { name: row.name, roots, instance, ...(issued ? { credential: issued } : {}) };
  }

  private connected(socket: Socket, admitted: Admitted): void {
    const welcome: RunnerWelcome = {
      name: admitted.name,
      ...(admitted.credential ? { credential: admitted.credential } : {}),
    };
    this.link(admitted.name).attach(socket, admitted.instance);
    socket.emit("runner.welcome", welcome);
    this.log(`runner "${admitted.name}" connected (roots: ${admitted.roots.join(", ")})`);
    const seen = (roots?: string[]) =>
      store.touchRunner(this.db, admitted.name, { lastSeenAt: new Date(), roots }).catch((error: unknown) => {
        // last_seen is informative; a failed write is retried at the next mark.
        this.log(`runner "${admitted.name}": last_seen not written: ${errorMessage(error)}`);
      });
    void seen(admitted.roots);
    socket.on("disconnect", (reason) => {
      this.log(`runner "${admitted.name}" disconnected (${reason})`);
      void seen();
    });
  }

  private drop(name: string, why: string): void {
    const link = this.links.get(name);
    if (!link) return;
    this.links.delete(name);
    link.close(new WorldlineError("runner:revoked", `The runner "${name}" was ${why}; its calls were stopped.`));
  }

  /** Runners revoked by another process (`worldline runners revoke`, another bridge) are dropped here too. */
  private async dropRevoked(): Promise<void> {
    const connected = [...this.links.values()].filter((link) => link.connected).map((link) => link.name);
    if (connected.length === 0) return;
    const rows = await Promise.all(connected.map((name) => store.getRunner(this.db, name))).catch((error: unknown) => {
      this.log(`runner revocation check failed (retried in ${REVOCATION_CHECK_MS} ms): ${errorMessage(error)}`);
      return [];
    });
    for (const row of rows) if (row?.revokedAt) this.drop(row.name, "revoked");
  }

  private async markSeen(): Promise<void> {
    const now = new Date();
    for (const link of this.links.values()) {
      if (!link.connected) continue;
      await store.touchRunner(this.db, link.name, { lastSeenAt: now }).catch((error: unknown) => {
        this.log(`runner "${link.name}": last_seen not written: ${errorMessage(error)}`);
      });
    }
  }
}

function parseRoots(json: string): string[] {
  try {
    const value: unknown = JSON.parse(json);
    return Array.isArray(value) ? value.filter((root): root is string => typeof root === "string") : [];
  } catch {
    // A hand-edited row: no roots rather than a failed listing.
    return [];
  }
}

function within(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

function envMs(name: string): number | undefined {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : undefined;
}
