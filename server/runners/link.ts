import { randomUUID } from "node:crypto";
import type { Socket } from "socket.io";
import { WorldlineError } from "../errors";
import {
  RunnerResults,
  RunnerFrameEvent,
  type RunnerOp,
  type RunnerOperation,
  type RunnerRequest,
  type RunnerResult,
} from "../protocol";
import { FrameRefusals, parseFrame, type RunnerFrame } from "./frames";
import { MAX_PENDING_PER_RUNNER } from "./limits";
import { ensureCode, type CallOptions, type ProcessSink, type PtySink } from "./link-parts";
export type { CallOptions, ProcessSink, PtySink } from "./link-parts";
import type { StreamSink } from "./remote-stream";

interface PendingCall {
  request: RunnerRequest;
  /** The runner process the request went to; undefined while it waits for a connection. */
  sentTo: string | undefined;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/** How requests reach the runner: its socket on this bridge, or through the bridge of the deployment holding it. */
interface Connection {
  instance: string;
  socket?: Socket;
  /** The bridge (owner id) holding the runner's socket (server/runners/relay.ts); undefined: this one. */
  via?: string;
  send(request: RunnerRequest): void;
}

/**
 * One runner as this bridge sees it: its connection (or none while it is away), the requests
 * waiting for answers, and the commands it runs for this bridge. Requests made while it is away
 * wait up to the grace period for it to return; an answer for a request it was not sent is
 * refused and logged.
 */
export class RunnerLink {
  private connection: Connection | null = null;
  private readonly pending = new Map<string, PendingCall>();
  private readonly processes = new Map<string, { sink: ProcessSink; instance: string | undefined }>();
  private readonly ptys = new Map<string, { sink: PtySink; instance: string | undefined }>();
  private readonly refusals: FrameRefusals;
  /** Preview streams (server/runners/remote-stream.ts), by id, with the runner process they were opened on. */
  private readonly streams = new Map<string, { sink: StreamSink; instance: string | undefined }>();
  private goneTimer: NodeJS.Timeout | null = null;
  private closedWith: WorldlineError | null = null;
  /** Set when the grace ran out while away: later calls fail at once until the runner is back. */
  private goneWith: WorldlineError | null = null;
  /** Set once the hub is shutting down: nothing waits the grace for a runner that is away. */
  private stopping: WorldlineError | null = null;

  constructor(
    readonly name: string,
    private readonly options: {
      graceMs: number;
      log: (line: string) => void;
      /** The runner's file tree watcher saw changes under `root`. */
      filesChanged?: (root: string, paths: string[]) => void;
      /** Team mode: this bridge's owner id, put on requests so the runner's answers find their way back here. */
      route?: () => string | undefined;
      /** Team mode: passes on a frame routed to another bridge; false when it is this bridge's own. */
      forward?: (route: string, event: RunnerFrameEvent, raw: unknown) => boolean;
    },
  ) {
    this.refusals = new FrameRefusals(name, options.log);
    this.startGrace();
  }

  get connected(): boolean {
    return this.connection !== null;
  }

  /** The runner process on the other end (its handshake's `instance`), while connected here or through another bridge. */
  get instance(): string | undefined {
    return this.connection?.instance;
  }

  /** Whether the runner's socket is on this bridge (not reached through another one). */
  get local(): boolean {
    return this.connection?.socket !== undefined;
  }

  /** The bridge the runner is reached through, when not this one. */
  get via(): string | undefined {
    return this.connection?.via;
  }

  /** The runner (re)connected to this bridge. */
  attach(socket: Socket, instance: string): void {
    for (const event of RunnerFrameEvent.options)
      socket.on(event, (raw: unknown) => this.fromSocket(socket, event, raw));
    socket.on("disconnect", () => {
      if (this.connection?.socket === socket) this.detach();
    });
    this.connect({ socket, instance, send: (request) => socket.emit("runner.request", request) });
  }

  /** The runner (re)connected to another bridge of the deployment: requests go through it. */
  attachVia(via: string, instance: string, send: (request: RunnerRequest) => void): void {
    // Told twice (its notice, and the registry read after another bridge's disconnect): nothing to resend.
    if (this.connection?.via === via && this.connection.instance === instance) return;
    this.connect({ via, instance, send });
  }

  /** The bridge the runner was reached through lost it (or died): calls wait for it to come back. */
  lostVia(via: string): void {
    if (this.connection?.via === via) this.detach();
  }

  /** Sends a request another bridge relays, when the runner's socket is here; false otherwise. */
  sendHere(request: RunnerRequest): boolean {
    if (!this.connection?.socket) return false;
    this.connection.socket.emit("runner.request", request);
    return true;
  }

  /** A frame from the runner passed on by the bridge holding its socket (server/runners/relay.ts). */
  receive(event: RunnerFrameEvent, raw: unknown): void {
    const parsed = parseFrame(event, raw);
    if (!parsed) return this.refusals.refused(`a malformed ${event} frame (through another bridge)`, raw);
    this.dispatch(parsed);
  }

  private dispatch(parsed: RunnerFrame): void {
    if (parsed.event === "runner.response") this.onResponse(parsed.frame);
    else if (parsed.event === "runner.output") this.onOutput(parsed.frame);
    else if (parsed.event === "runner.exit") this.onExit(parsed.frame);
    else if (parsed.event === "runner.pty_data") this.onPtyData(parsed.frame);
    else if (parsed.event === "runner.pty_exit") this.onPtyExit(parsed.frame);
    else if (parsed.event === "runner.stream_data" || parsed.event === "runner.stream_end") this.onStream(parsed.frame);
    else this.options.filesChanged?.(parsed.frame.root, parsed.frame.paths);
  }

  /**
   * A (re)connection: requests that waited are sent; those the previous process had are lost with it.
   * Those sent to this same process before the drop are sent again (a request in flight when the
   * connection dropped is lost with it); the runner answers a request it already did from its memory.
   */
  private connect(connection: Connection): void {
    const previous = this.connection;
    if (previous?.socket && previous.socket !== connection.socket) previous.socket.disconnect(true);
    this.connection = connection;
    this.goneWith = null;
    this.stopGrace();
    this.loseFromOtherInstances(connection.instance);
    for (const call of this.pending.values())
      if (call.sentTo === undefined || call.sentTo === connection.instance) this.send(call);
  }

  private detach(): void {
    this.connection = null;
    if (this.stopping) this.giveUp(this.stopping);
    else this.startGrace();
  }

  /**
   * A frame from the runner's socket here, parsed before it goes anywhere (here, or on to the bridge it
   * is for): a malformed one counts against that connection, which is closed when it keeps sending them.
   */
  private fromSocket(socket: Socket, event: RunnerFrameEvent, raw: unknown): void {
    const parsed = parseFrame(event, raw);
    if (!parsed) return this.refusals.malformedFrom(socket, event, raw);
    const route = "route" in parsed.frame ? parsed.frame.route : undefined;
    if (route !== undefined && this.options.forward?.(route, event, raw)) return;
    this.dispatch(parsed);
  }

  /** Revoked or removed: everything waiting fails now. */
  close(error: WorldlineError): void {
    this.closedWith = error;
    this.stopGrace();
    this.connection?.socket?.disconnect(true);
    this.connection = null;
    this.failAll(error);
    this.endTerminals();
  }

  /**
   * The hub is shutting down: calls waiting for a runner that is away fail now, and so do later ones
   * while it is away (its processes died with it, or it stops them when its hub goes), instead of
   * holding the shutdown for the grace. A connected runner is still told to stop what it runs.
   */
  stop(error: WorldlineError): void {
    this.stopping = error;
    if (!this.connection) this.giveUp(error);
  }

  call<O extends RunnerOp>(
    operation: Extract<RunnerOperation, { op: O }>,
    options: CallOptions = {},
  ): Promise<RunnerResult<O>> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    if (this.goneWith && !this.connection) return Promise.reject(this.goneWith);
    if (options.now && !this.connection)
      return Promise.reject(
        new WorldlineError("runner:offline", `The runner "${this.name}" is not connected to this hub.`),
      );
    if (this.pending.size >= MAX_PENDING_PER_RUNNER)
      return Promise.reject(
        new WorldlineError("runner:busy", `The runner "${this.name}" has too many requests waiting.`),
      );
    const route = this.options.route?.();
    const request: RunnerRequest = {
      id: randomUUID(),
      epoch: options.fence?.epoch ?? 0,
      ...(options.fence ? { sessionId: options.fence.sessionId } : {}),
      ...(route ? { route } : {}),
      operation,
    };
    return new Promise<RunnerResult<O>>((resolve, reject) => {
      const call: PendingCall = { request, sentTo: undefined, resolve: resolve as (v: unknown) => void, reject };
      this.pending.set(request.id, call);
      const { signal } = options;
      if (signal) {
        const onAbort = () => {
          if (!this.pending.delete(request.id)) return;
          if (call.sentTo !== undefined) void this.cancel(request.id);
          reject(new WorldlineError("runner:cancelled", "Cancelled."));
        };
        if (signal.aborted) return onAbort();
        signal.addEventListener("abort", onAbort, { once: true });
        const settle = () => signal.removeEventListener("abort", onAbort);
        call.resolve = (value) => (settle(), resolve(value as RunnerResult<O>));
        call.reject = (error) => (settle(), reject(error));
      }
      if (this.connection) this.send(call);
    });
  }

  /** Registers where a command's output goes before the `exec` that starts it is sent. */
  trackProcess(processId: string, sink: ProcessSink): void {
    this.processes.set(processId, { sink, instance: this.connection?.instance });
  }

  forgetProcess(processId: string): void {
    this.processes.delete(processId);
  }

  /** Registers where a terminal's output goes before the `pty.open` that starts it is sent. */
  trackPty(ptyId: string, sink: PtySink): void {
    this.ptys.set(ptyId, { sink, instance: this.connection?.instance });
  }

  /** Registers where a preview stream's bytes go before the `stream.open` that connects it is sent. */
  trackStream(streamId: string, sink: StreamSink): void {
    this.streams.set(streamId, { sink, instance: this.connection?.instance });
  }

  forgetStream(streamId: string): void {
    this.streams.delete(streamId);
  }

  private send(call: PendingCall): void {
    const connection = this.connection!;
    call.sentTo = connection.instance;
    const op = call.request.operation;
    if (op.op === "exec") {
      const tracked = this.processes.get(op.processId);
      if (tracked) tracked.instance = connection.instance;
    }
    if (op.op === "pty.open" || op.op === "stream.open") {
      const tracked = op.op === "pty.open" ? this.ptys.get(op.ptyId) : this.streams.get(op.streamId);
      if (tracked) tracked.instance = connection.instance;
    }
    connection.send(call.request);
  }

  private cancel(requestId: string): Promise<unknown> {
    // Best effort: a search the hub stopped waiting for should not keep the runner's disk busy.
    return this.call({ op: "cancel", requestId }).catch(() => undefined);
  }

  private onResponse(response: FrameOf<"runner.response">): void {
    const call = this.pending.get(response.id);
    if (!call || call.sentTo === undefined) return this.refuse(`an answer to request ${response.id} it was not sent`);
    this.pending.delete(response.id);
    if (!response.ok) {
      const { code, message, details } = response.error;
      call.reject(new WorldlineError(ensureCode(code), message, details === undefined ? undefined : { details }));
      return;
    }
    const schema = RunnerResults[call.request.operation.op];
    const result = schema.safeParse(response.result);
    if (!result.success) {
      this.refuse(`a malformed ${call.request.operation.op} result`);
      call.reject(new WorldlineError("runner:bad_response", `The runner "${this.name}" sent a malformed answer.`));
      return;
    }
    call.resolve(result.data);
  }

  private onOutput(output: FrameOf<"runner.output">): void {
    const tracked = this.processes.get(output.processId);
    if (!tracked) return this.refuse(`output of command ${output.processId} it was not asked to run`);
    tracked.sink.output(output.chunk, output.stream);
  }

  private onExit(exit: FrameOf<"runner.exit">): void {
    const tracked = this.processes.get(exit.processId);
    if (!tracked) return this.refuse(`the exit of command ${exit.processId} it was not asked to run`);
    this.processes.delete(exit.processId);
    const { code, signal, leftoversStopped } = exit;
    tracked.sink.exit({ code, signal: signal as NodeJS.Signals | null, leftoversStopped });
  }

  private onPtyData(data: FrameOf<"runner.pty_data">): void {
    const tracked = this.ptys.get(data.ptyId);
    if (!tracked) return this.refuse(`output of terminal ${data.ptyId} it was not asked to open`);
    tracked.sink.data(data.data);
  }

  private onPtyExit(exit: FrameOf<"runner.pty_exit">): void {
    const tracked = this.ptys.get(exit.ptyId);
    if (!tracked) return this.refuse(`the exit of terminal ${exit.ptyId} it was not asked to open`);
    this.ptys.delete(exit.ptyId);
    tracked.sink.exit(exit.exitCode);
  }

  private onStream(frame: FrameOf<"runner.stream_data"> | FrameOf<"runner.stream_end">): void {
    const tracked = this.streams.get(frame.streamId);
    // A stream this side closed meanwhile still gets what was in flight: dropped without a word.
    if (!tracked) return;
    if ("data" in frame) return tracked.sink.data(frame.data);
    this.streams.delete(frame.streamId);
    tracked.sink.end(frame.error);
  }

  /** Logged at a bounded rate (server/runners/frames.ts). */
  private refuse(what: string): void {
    this.refusals.refused(what);
  }

  private startGrace(): void {
    this.stopGrace();
    this.goneTimer = setTimeout(() => {
      this.goneTimer = null;
      const seconds = Math.round(this.options.graceMs / 1000);
      this.giveUp(
        new WorldlineError(
          "runner:gone",
          `The runner "${this.name}" disconnected and did not come back within ${seconds} s; ` +
            "what it was doing for this call is unknown. Check the runner's machine, then try again.",
        ),
      );
    }, this.options.graceMs);
    this.goneTimer.unref();
  }

  /** No waiting for the runner any more: what waits fails, and later calls fail at once until it is back. */
  private giveUp(error: WorldlineError): void {
    this.stopGrace();
    this.goneWith = error;
    this.failAll(error);
  }

  private stopGrace(): void {
    if (this.goneTimer) clearTimeout(this.goneTimer);
    this.goneTimer = null;
  }

  /** A new runner process: what the old one was asked (and the commands it ran) died with it. */
  private loseFromOtherInstances(instance: string): void {
    const error = new WorldlineError(
      "runner:restarted",
      `The runner "${this.name}" restarted while this call ran on it; what the call did before is unknown. Try again.`,
    );
    for (const [id, call] of this.pending) {
      if (call.sentTo === undefined || call.sentTo === instance) continue;
      this.pending.delete(id);
      call.reject(error);
    }
    for (const [id, tracked] of this.processes) {
      if (tracked.instance === undefined || tracked.instance === instance) continue;
      this.processes.delete(id);
      tracked.sink.lost(error);
    }
    for (const [id, tracked] of this.ptys) {
      if (tracked.instance === undefined || tracked.instance === instance) continue;
      this.ptys.delete(id);
      tracked.sink.exit(null);
    }
    for (const [id, tracked] of this.streams) {
      if (tracked.instance === undefined || tracked.instance === instance) continue;
      this.streams.delete(id);
      tracked.sink.end(error.message);
    }
  }

  private failAll(error: WorldlineError): void {
    const calls = [...this.pending.values()];
    this.pending.clear();
    for (const call of calls) call.reject(error);
    const processes = [...this.processes.values()];
    this.processes.clear();
    for (const tracked of processes) tracked.sink.lost(error);
    const streams = [...this.streams.values()];
    this.streams.clear();
    for (const tracked of streams) tracked.sink.end(error.message);
  }

  /** Terminals outlive the grace (their shells keep running on the runner); they end when the link closes for good. */
  private endTerminals(): void {
    const ptys = [...this.ptys.values()];
    this.ptys.clear();
    for (const tracked of ptys) tracked.sink.exit(null);
  }
}

type FrameOf<E extends RunnerFrame["event"]> = Extract<RunnerFrame, { event: E }>["frame"];
