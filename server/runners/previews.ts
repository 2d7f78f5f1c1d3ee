import type { Duplex } from "node:stream";
import type { RunnerLink } from "./link";
import { RemoteStream } from "./remote-stream";

/** A process a runner session's processes start under, by its pid on the runner. */
export interface RunnerProcessRoot {
  pid: number;
  kind: "terminal" | "group";
}

/**
 * Previews of runner sessions' dev servers, on the hub's side (server/preview asks): the ports
 * their processes listen on, read by the runner from its own /proc, and connections to those
 * ports through the runner's link. Neither waits for a runner that is away.
 */
export class RunnerPreviews {
  constructor(private readonly link: (runner: string) => RunnerLink) {}

  /** The ports processes under `roots` (the session's terminals and commands on the runner) listen on. */
  ports(runner: string, roots: RunnerProcessRoot[]) {
    return this.link(runner).call({ op: "ports.list", roots }, { now: true });
  }

  /** A connection to a port on the runner's loopback; it fails (ECONNREFUSED, …) as a TCP socket would. */
  connect(runner: string, port: number): Duplex {
    return new RemoteStream(this.link(runner), port);
  }
}
