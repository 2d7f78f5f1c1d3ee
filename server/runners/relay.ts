import * as z from "zod";
import type { RedisLink } from "../bus";
import { errorMessage, WorldlineError } from "../errors";
import type { OwnerLease } from "../leases";
import { RunnerName, type RunnerFrameEvent } from "../protocol";
import type { Rpc } from "../team";
import type { RunnerLink } from "./link";

/** The deployment this bridge is part of (team mode: PostgreSQL + Redis). */
export interface Team {
  rpc: Rpc;
  link: RedisLink;
  lease: OwnerLease;
}

/** What the relay uses of the hub (server/runners/hub.ts). */
export interface RelayHub {
  link(name: string): RunnerLink;
  links(): Iterable<RunnerLink>;
  /** Closes a runner's link on this bridge only (the relay told the others). */
  dropHere(name: string, error: WorldlineError): void;
  /** Tells this bridge's listeners only. */
  filesChangedHere(runner: string, root: string, paths: string[]): void;
}

const owner = z.string().min(1).max(64);

/** What one bridge tells all the others about runners, on the deployment's runners channel. */
const RunnerNotice = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("connected"), from: owner, runner: RunnerName, instance: z.string().min(1).max(64) }),
  z.object({ kind: z.literal("disconnected"), from: owner, runner: RunnerName }),
  /** Revoked or renamed: every bridge closes its link, the one holding the socket disconnects it. */
  z.object({
    kind: z.literal("dropped"),
    from: owner,
    runner: RunnerName,
    code: z.enum(["runner:revoked", "runner:gone"]),
    message: z.string(),
  }),
  z.object({ kind: z.literal("files"), from: owner, runner: RunnerName, root: z.string(), paths: z.array(z.string()) }),
]);
type RunnerNotice = z.infer<typeof RunnerNotice>;
/** A notice as this bridge tells it (`from` is added), per kind. */
type WithoutFrom<N> = N extends unknown ? Omit<N, "from"> : never;
type Told = WithoutFrom<RunnerNotice>;

/** Where a runner's socket is: the bridge holding it and the socket (a late disconnect must not erase a newer entry). */
const Whereabouts = z.object({ owner, instance: z.string(), socket: z.string() });

/** Deletes a hash field only while it still holds the given value (a disconnect racing the next connect elsewhere). */
const DELETE_IF_SAME = `if redis.call('hget', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('hdel', KEYS[1], ARGV[1]) end return 0`;

/**
 * Runners in team mode. A runner's socket is on one bridge (the one its connection landed on);
 * every other bridge's link to it sends requests through that bridge (rpc `runner.request`),
 * and requests carry their bridge's owner id (`route`), which the runner puts on the answer and
 * on the output of what the request started: the bridge holding the socket passes those on
 * (rpc `runner.frame`). Routing by what the runner echoes, not by a table here, keeps a
 * command's output and a terminal's bytes finding their bridge after the runner reconnects to
 * another one. Where each runner is lives in a Redis hash (read at start) and every change is
 * told on a channel all bridges listen to.
 */
export class RunnerRelay {
  constructor(
    private readonly hub: RelayHub,
    private readonly team: Team,
    private readonly log: (line: string) => void,
  ) {}

  get me(): string {
    return this.team.lease.id;
  }

  async start(): Promise<void> {
    const { rpc, link, lease } = this.team;
    rpc.handle("runner.request", ({ runner, request }) => {
      // The runner left this bridge meanwhile: the sender sends it again once told where it is.
      if (!this.hub.link(runner).sendHere(request))
        this.log(`a request for runner "${runner}" arrived after it left this bridge; its sender resends it`);
    });
    rpc.handle("runner.frame", ({ runner, event, frame, data }) => {
      const raw = data === undefined ? frame : { ...(frame as object), data: Buffer.from(data, "base64") };
      this.hub.link(runner).receive(event, raw);
    });
    link.sub.on("message", (channel: string, raw: string) => {
      if (channel === this.channel) this.heard(raw);
    });
    await link.sub.subscribe(this.channel);
    // Runners connected to the other bridges before this one started.
    const live = new Set(await lease.liveOwners());
    for (const [runner, raw] of Object.entries(await link.pub.hgetall(this.registry))) {
      const where = parseJson(Whereabouts, raw);
      if (where && where.owner !== this.me && live.has(where.owner)) this.reachVia(runner, where.owner, where.instance);
    }
    // A bridge killed while holding a runner tells nobody: its runners wait out the grace (or reconnect elsewhere).
    lease.onBeat(async () => {
      const reached = [...this.hub.links()].filter((runnerLink) => runnerLink.via !== undefined);
      if (reached.length === 0) return;
      const alive = new Set(await lease.liveOwners());
      for (const runnerLink of reached) if (!alive.has(runnerLink.via!)) runnerLink.lostVia(runnerLink.via!);
    });
  }

  /** A runner connected to this bridge: recorded, and told to the others. */
  async connected(runner: string, instance: string, socket: string): Promise<void> {
    await this.team.link.pub.hset(this.registry, runner, JSON.stringify({ owner: this.me, instance, socket }));
    this.tell({ kind: "connected", runner, instance });
  }

  async disconnected(runner: string, instance: string, socket: string): Promise<void> {
    const entry = JSON.stringify({ owner: this.me, instance, socket });
    await this.team.link.pub.eval(DELETE_IF_SAME, 1, this.registry, runner, entry);
    this.tell({ kind: "disconnected", runner });
  }

  dropped(runner: string, error: WorldlineError): void {
    const code = error.code === "runner:revoked" ? "runner:revoked" : "runner:gone";
    this.tell({ kind: "dropped", runner, code, message: error.message });
  }

  filesChanged(runner: string, root: string, paths: string[]): void {
    this.tell({ kind: "files", runner, root, paths });
  }

  /** Passes a frame the runner sent for another bridge on to it; false when it is this bridge's own. */
  forward(runner: string, route: string, event: RunnerFrameEvent, raw: unknown): boolean {
    if (route === this.me) return false;
    const frame = raw as Record<string, unknown>;
    if ((event === "runner.pty_data" || event === "runner.stream_data") && frame.data instanceof Uint8Array) {
      const { data, ...rest } = frame;
      const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64");
      this.team.rpc.send(route, "runner.frame", { runner, event, frame: rest, data: bytes });
    } else this.team.rpc.send(route, "runner.frame", { runner, event, frame });
    return true;
  }

  private reachVia(runner: string, via: string, instance: string): void {
    this.hub
      .link(runner)
      .attachVia(via, instance, (request) => this.team.rpc.send(via, "runner.request", { runner, request }));
  }

  private heard(raw: string): void {
    const notice = parseJson(RunnerNotice, raw);
    if (!notice) return this.log("ignored a malformed runner notice from another bridge");
    if (notice.from === this.me) return;
    if (notice.kind === "connected") this.reachVia(notice.runner, notice.from, notice.instance);
    else if (notice.kind === "disconnected") {
      this.find(notice.runner)?.lostVia(notice.from);
      void this.relocate(notice.runner);
    } else if (notice.kind === "dropped")
      this.hub.dropHere(notice.runner, new WorldlineError(notice.code, notice.message));
    else this.hub.filesChangedHere(notice.runner, notice.root, notice.paths);
  }

  /**
   * Notices from different bridges may arrive in any order (a runner that moved A → B → A fast): after
   * a disconnect, the registry (written before each notice) says where the runner is now.
   */
  private async relocate(runner: string): Promise<void> {
    const raw = await this.team.link.pub.hget(this.registry, runner).catch((error: unknown) => {
      this.log(`where runner "${runner}" is could not be read: ${errorMessage(error)}; its next notice tells`);
      return null;
    });
    const where = raw === null ? null : parseJson(Whereabouts, raw);
    const runnerLink = this.find(runner);
    if (where && where.owner !== this.me && runnerLink && !runnerLink.connected)
      this.reachVia(runner, where.owner, where.instance);
  }

  private find(runner: string): RunnerLink | undefined {
    for (const runnerLink of this.hub.links()) if (runnerLink.name === runner) return runnerLink;
    return undefined;
  }

  private tell(notice: Told): void {
    const message = JSON.stringify({ ...notice, from: this.me });
    this.team.link.pub.publish(this.channel, message).catch((error: unknown) => {
      // The others learn of it at their next look (a reconnect, the revocation check, a restart).
      this.log(`telling the other bridges about runner "${notice.runner}" failed: ${errorMessage(error)}`);
    });
  }

  private get channel(): string {
    return `${this.team.link.prefix}:runners`;
  }

  private get registry(): string {
    return `${this.team.link.prefix}:runners:where`;
  }
}

function parseJson<T>(schema: z.ZodType<T>, raw: string): T | null {
  try {
    const parsed = schema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : null;
  } catch {
    // Not JSON: the caller logs what it ignored.
    return null;
  }
}
