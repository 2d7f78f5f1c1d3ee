import type { IncomingMessage, Server as HttpServer } from "node:http";
import path from "node:path";
import type { Server, Socket } from "socket.io";
import { errorMessage, isWorldlineError, WorldlineError } from "../errors";
import type { Fence, WorkspaceHost } from "../host";
import {
  RUNNER_SOCKET_PATH,
  RunnerAccess,
  RunnerHello,
  RunnerName,
  type Role,
  type RunnerView,
  type RunnerWelcome,
} from "../protocol";
import * as store from "../store";
import { LAST_SEEN_EVERY_MS, REVOCATION_CHECK_MS, RUNNER_GRACE_MS, RUNNER_MAX_FRAME_BYTES } from "./limits";
import { RunnerLink } from "./link";
import { RunnerPreviews } from "./previews";
import { RunnerRelay, type Team } from "./relay";
import { RemoteHost } from "./remote-host";
import { ENROLLMENT_TTL_MS, hashSecret, newCredential, newEnrollmentToken } from "./secrets";

export interface RunnerHubOptions {
  db: store.Db;
  /** How long calls wait for a runner that went away (default RUNNER_GRACE_MS, or WORLDLINE_RUNNER_GRACE_MS). */
  graceMs?: number;
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
  private readonly log: (line: string) => void;
  private io: Server | null = null;
  /** Team mode: how this bridge reaches runners connected to the others (server/runners/relay.ts). */
  private relay: RunnerRelay | null = null;
  private timers: NodeJS.Timeout[] = [];
  private readonly hostHub = {
    link: (name: string) => this.link(name),
    log: (line: string) => this.log(line),
    requireKnown: (name: string) => this.requireKnown(name),
  };
  private readonly fileListeners = new Set<(runner: string, root: string, paths: string[]) => void>();
  /** Ports and preview streams of runner sessions' dev servers (server/preview asks). */
  readonly previews = new RunnerPreviews((name) => this.link(name));

  constructor(options: RunnerHubOptions) {
    this.db = options.db;
    this.graceMs = options.graceMs ?? envMs("WORLDLINE_RUNNER_GRACE_MS") ?? RUNNER_GRACE_MS;
    this.log = options.log ?? ((line) => process.stderr.write(`[worldline] ${line}\n`));
  }

  /**
   * Starts serving runners on the bridge's own port, apart from the UI's socket.io. socket.io loads
   * here, not with the hub: print mode has a hub (for its sessions' hosts) and serves nothing.
   */
  async attach(
    httpServer: HttpServer,
    options: { hostAllowed?: (req: IncomingMessage) => boolean } = {},
  ): Promise<void> {
    const { hostAllowed } = options;
    const { Server } = await import("socket.io");
    const io = new Server(httpServer, {
      path: RUNNER_SOCKET_PATH,
      serveClient: false,
      transports: ["websocket"],
      perMessageDeflate: false,
      maxHttpBufferSize: RUNNER_MAX_FRAME_BYTES,
      // The same Host allowlist as the UI's socket (DNS rebinding); a runner sends no Origin.
      ...(hostAllowed ? { allowRequest: (req, callback) => callback(null, hostAllowed(req)) } : {}),
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

  /** Team mode: any bridge of the deployment serves any runner's sessions, wherever its socket is. */
  async joinTeam(team: Team): Promise<void> {
    const relay = new RunnerRelay(
      {
        link: (name) => this.link(name),
        links: () => this.links.values(),
        dropHere: (name, error) => this.drop(name, error),
        filesChangedHere: (runner, root, paths) => this.filesChanged(runner, root, paths),
      },
      team,
      this.log,
    );
    this.relay = relay;
    await relay.start();
  }

  /** `runners add`: a new runner (or a new token for one), returning the one-time token. */
  async add(name: string, allowedRoots: string[] = []): Promise<string> {
    checkName(name);
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
      access: parseAccess(row.access),
      duplicate_at: row.duplicateAt?.toISOString() ?? null,
    }));
  }

  /** Who may use a runner: roles and/or people by name; an empty access is everyone who may use runners. */
  async setAccess(name: string, access: RunnerAccess): Promise<boolean> {
    return store.setRunnerAccess(this.db, name, JSON.stringify(access));
  }

  /**
   * Whether a person may use a runner (start a session there, list its folders). `person` undefined
   * is the hub's operator; admins always may.
   */
  async mayUse(name: string, person: { name: string; role: Role } | undefined): Promise<boolean> {
    if (!person || person.role === "admin") return true;
    const row = await store.getRunner(this.db, name);
    if (!row) return true; // no such runner: the caller's own check says so in its words
    const access = parseAccess(row.access);
    const limited = (access.roles?.length ?? 0) > 0 || (access.people?.length ?? 0) > 0;
    return !limited || !!access.roles?.includes(person.role) || !!access.people?.includes(person.name);
  }

  async requireUse(name: string, person: { name: string; role: Role } | undefined): Promise<void> {
    if (!(await this.mayUse(name, person)))
      throw new WorldlineError("runner:forbidden", `You may not use the runner "${name}"; an admin decides who may.`);
  }

  /** Revokes a runner and disconnects it at once, wherever it is connected; its waiting calls fail. */
  async revoke(name: string): Promise<boolean> {
    const revoked = await store.revokeRunner(this.db, name);
    this.dropEverywhere(name, revokedError(name));
    return revoked;
  }

  /**
   * Renames a runner; its sessions follow. A connected runner is disconnected and comes back under
   * the new name at once (its credential is unchanged); calls waiting on it fail.
   */
  async rename(from: string, to: string): Promise<boolean> {
    checkName(to);
    const renamed = await store.renameRunner(this.db, from, to);
    if (renamed)
      this.dropEverywhere(
        from,
        new WorldlineError(
          "runner:gone",
          `The runner "${from}" was renamed to "${to}" while this call waited; try again.`,
        ),
      );
    return renamed;
  }

  /**
   * The host of a session on a runner (its tools, files, terminals, snapshots, skills); a turn's host
   * carries its claim (the runner refuses a stale one). Callers reach it through WorkspaceHosts (server/host).
   */
  hostFor(runner: string, fence?: Fence): WorkspaceHost {
    return new RemoteHost(runner, this.hostHub, fence);
  }

  /** Changes the runners' file tree watchers saw (for `files.changed` to the tabs following those sessions). */
  onFilesChanged(listener: (runner: string, root: string, paths: string[]) => void): () => void {
    this.fileListeners.add(listener);
    return () => this.fileListeners.delete(listener);
  }

  /** The folder picker on a runner's machine. */
  async listFolders(runner: string, folder?: string) {
    await this.requireKnown(runner);
    return this.link(runner).call({ op: "listFolders", ...(folder ? { path: folder } : {}) }, { now: true });
  }

  /** The bridge is shutting down: calls for runners that are away stop waiting for them (see RunnerLink.stop). */
  stopping(): void {
    const error = new WorldlineError("runner:gone", "The hub is shutting down.");
    for (const link of this.links.values()) link.stop(error);
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
        log: this.log,
        filesChanged: (root, paths) => {
          this.filesChanged(name, root, paths);
          this.relay?.filesChanged(name, root, paths);
        },
        route: () => this.relay?.me,
        forward: (route, event, raw) => this.relay?.forward(name, route, event, raw) ?? false,
      });
      this.links.set(name, link);
    }
    return link;
  }

  private filesChanged(runner: string, root: string, paths: string[]): void {
    for (const listener of this.fileListeners) listener(runner, root, paths);
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
      const presented = hashSecret(credential!);
      row = await store.findRunnerByCredentialHash(this.db, presented);
      // A revoked runner's credential, or one replaced by a new enrollment, matches no row.
      if (!row || row.revokedAt) throw new WorldlineError("runner:bad_credential", "unknown or revoked credential");
      await this.refuseSecondConnection(row.name, instance);
      // A new credential at every connection: a copy taken from the runner's machine stops working at its next one.
      issued = newCredential();
      if (!(await store.rotateCredential(this.db, row.id, presented, hashSecret(issued))))
        throw new WorldlineError("runner:bad_credential", "the credential was replaced meanwhile");
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

  /**
   * A runner's credential serves one runner process at a time: while one is connected, another
   * connection with it (a copy read from that machine) is refused and reported to admins, in the log
   * and as `duplicate_at` in the runner list. The same process reconnecting (its `instance`) is not
   * a second one. Not fatal for the caller, who retries: a runner restarted before the hub saw its
   * old socket close gets in once the hub has.
   */
  private async refuseSecondConnection(name: string, instance: string): Promise<void> {
    const live = this.links.get(name);
    if (!live?.connected || live.instance === instance) return;
    await store.markDuplicate(this.db, name).catch((error: unknown) => {
      // The log line below still reports it.
      this.log(`runner "${name}": duplicate_at not written: ${errorMessage(error)}`);
    });
    this.log(
      `SECURITY: runner "${name}" is connected, and another connection with its credential was refused; if the runner did not restart, revoke it (worldline runners revoke ${name}) and enroll it again.`,
    );
    throw new WorldlineError(
      "runner:busy",
      `runner "${name}" is already connected with this credential; a second connection is refused (admins were told)`,
    );
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
    const told = (what: string, telling: Promise<void> | undefined) =>
      telling?.catch((error: unknown) => {
        // The other bridges then reach it through the registry at their next start, or after its next reconnect.
        this.log(`runner "${admitted.name}": the other bridges were not told it ${what}: ${errorMessage(error)}`);
      });
    void told("connected", this.relay?.connected(admitted.name, admitted.instance, socket.id));
    socket.on("disconnect", (reason) => {
      this.log(`runner "${admitted.name}" disconnected (${reason})`);
      void seen();
      void told("disconnected", this.relay?.disconnected(admitted.name, admitted.instance, socket.id));
    });
  }

  private dropEverywhere(name: string, error: WorldlineError): void {
    this.drop(name, error);
    this.relay?.dropped(name, error);
  }

  private drop(name: string, error: WorldlineError): void {
    const link = this.links.get(name);
    if (!link) return;
    this.links.delete(name);
    link.close(error);
  }

  /** Runners revoked or renamed by another process (`worldline runners`, another bridge) are dropped here too. */
  private async dropRevoked(): Promise<void> {
    const connected = [...this.links.values()].filter((link) => link.connected).map((link) => link.name);
    if (connected.length === 0) return;
    const rows = await Promise.all(connected.map((name) => store.getRunner(this.db, name))).catch((error: unknown) => {
      this.log(`runner revocation check failed (retried in ${REVOCATION_CHECK_MS} ms): ${errorMessage(error)}`);
      return null;
    });
    rows?.forEach((row, index) => {
      const name = connected[index];
      if (row?.revokedAt) this.drop(name, revokedError(name));
      // Renamed: the runner comes back under its new name (its credential finds the row).
      else if (!row) this.drop(name, new WorldlineError("runner:gone", `The runner "${name}" was renamed; try again.`));
    });
  }

  private async markSeen(): Promise<void> {
    const now = new Date();
    for (const link of this.links.values()) {
      // The bridge holding its socket writes it.
      if (!link.local) continue;
      await store.touchRunner(this.db, link.name, { lastSeenAt: now }).catch((error: unknown) => {
        this.log(`runner "${link.name}": last_seen not written: ${errorMessage(error)}`);
      });
    }
  }
}

function revokedError(name: string): WorldlineError {
  return new WorldlineError("runner:revoked", `The runner "${name}" was revoked; its calls were stopped.`);
}

function checkName(name: string): void {
  const parsed = RunnerName.safeParse(name);
  if (!parsed.success)
    throw new WorldlineError("runner:invalid", `Runner name "${name}": ${parsed.error.issues[0]?.message}.`);
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

function parseAccess(json: string): RunnerAccess {
  try {
    const parsed = RunnerAccess.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : {};
  } catch {
    // A hand-edited row: no limit rather than a failed listing (admins see the access they set).
    return {};
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
