import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { io, type Socket } from "socket.io-client";
import { ProcessRecords, setProcessRecords } from "../processes";
import { RUNNER_SOCKET_PATH, RunnerWelcome, type RunnerHello } from "../protocol";
import { RootGuard } from "./guard";
import { RunnerWorker, worktreesFolder } from "./serve";

/** First reconnect delay; socket.io doubles it (with jitter) up to the maximum. */
const RECONNECT_FIRST_MS = 500;
/** Longest wait between reconnects: a hub back from a restart is found within this. */
const RECONNECT_MAX_MS = 10_000;

export interface RunnerOptions {
  hub: string;
  token?: string;
  name?: string;
  roots: string[];
  /** WORLDLINE_HOME: the credential (runner.json) and process records live here. */
  home: string;
  version: string;
  /** The `connected to` line and the log. */
  out: (line: string) => void;
  log: (line: string) => void;
}

interface SavedCredential {
  hub: string;
  name: string;
  credential: string;
}

/** Why the hub refused us for good: retrying with the same secret cannot succeed. */
const FATAL_REFUSALS = ["bad_token", "bad_credential", "root_refused", "bad_hello"];

/**
 * `worldline runner`: dials the hub, exchanges the enrollment token for a credential once
 * (kept in WORLDLINE_HOME/runner.json, mode 0600), and serves workspace requests inside its
 * roots until stopped. It reconnects with backoff; it ends (rejects) only when the hub refuses
 * its credentials for good (revoked, replaced, unknown).
 */
export async function runRunner(options: RunnerOptions): Promise<{ stop(): Promise<void>; done: Promise<void> }> {
  // Forks and worktrees of its sessions are made in its own data directory (server/runner/snapshots.ts,
  // server/worktrees) and served from there.
  const guard = await RootGuard.create(options.roots, [
    path.join(options.home, "forks"),
    worktreesFolder(options.home),
  ]);
  const records = new ProcessRecords(path.join(options.home, "run", "processes"));
  const killed = await records.cleanupOrphans();
  if (killed.length > 0) options.log(`stopped ${killed.length} command(s) left running by a runner that died`);
  setProcessRecords(records);

  const credentialFile = path.join(options.home, "runner.json");
  refuseCredentialInRoots(guard, credentialFile);
  const hub = options.hub.replace(/\/+$/, "");
  let saved = readCredential(credentialFile, hub);
  // With a saved credential the token (already used) is only a fallback for a re-enrollment.
  let useToken = !saved;
  if (!saved && !options.token)
    throw new Error("no credential for this hub yet: give --token from `worldline runners add`");
  const instance = randomUUID();
  const hello = (): RunnerHello => ({
    ...(options.name ? { name: options.name } : {}),
    ...(useToken || !saved ? { token: options.token } : { credential: saved.credential }),
    roots: [...guard.roots],
    instance,
    version: options.version,
  });

  const socket: Socket = io(hub, {
    path: RUNNER_SOCKET_PATH,
    transports: ["websocket"],
    auth: (send) => send(hello()),
    reconnectionDelay: RECONNECT_FIRST_MS,
    reconnectionDelayMax: RECONNECT_MAX_MS,
  });
  const worker = new RunnerWorker(
    guard,
    {
      response: (response) => socket.emit("runner.response", response),
      output: (processId, chunk, route, stream) =>
        socket.emit("runner.output", { processId, chunk, ...(stream ? { stream } : {}), ...routed(route) }),
      exit: (processId, info, route) => socket.emit("runner.exit", { processId, ...info, ...routed(route) }),
      ptyData: (ptyId, data, route) => socket.emit("runner.pty_data", { ptyId, data, ...routed(route) }),
      ptyExit: (ptyId, exitCode, route) => socket.emit("runner.pty_exit", { ptyId, exitCode, ...routed(route) }),
      filesChanged: (root, paths) => socket.emit("runner.files_changed", { root, paths }),
      streamData: (streamId, data, route) => socket.emit("runner.stream_data", { streamId, data, ...routed(route) }),
      streamEnd: (streamId, error, route) =>
        socket.emit("runner.stream_end", { streamId, ...(error ? { error } : {}), ...routed(route) }),
      log: options.log,
    },
    options.home,
  );
  socket.on("runner.request", (raw: unknown) => void worker.handle(raw));

  let finish!: (error?: Error) => void;
  const done = new Promise<void>((resolve, reject) => {
    finish = (error) => (error ? reject(error) : resolve());
  });
  socket.on("runner.welcome", (raw: unknown) => {
    const welcome = RunnerWelcome.safeParse(raw);
    if (!welcome.success) return options.log("the hub sent a malformed welcome; ignored");
    // A new credential at every connection; the one just used stays valid at the hub until this one is.
    if (welcome.data.credential) {
      saved = { hub, name: welcome.data.name, credential: welcome.data.credential };
      writeCredential(credentialFile, saved);
      useToken = false;
    }
    options.out(`Worldline runner ${welcome.data.name} connected to ${hub}`);
  });
  // socket.io retries lost connections itself, but not a handshake the hub's middleware refused: those are ours.
  let refusals = 0;
  let retryTimer: NodeJS.Timeout | undefined;
  const retry = (delayMs: number) => {
    clearTimeout(retryTimer);
    retryTimer = setTimeout(() => socket.connect(), delayMs);
  };
  socket.on("connect", () => (refusals = 0));
  socket.on("connect_error", (error) => {
    const fatal = FATAL_REFUSALS.find((code) => error.message.includes(code));
    if (fatal === "bad_credential" && !useToken && options.token) {
      // The saved credential is gone (a new enrollment): the token given on the command line may be the new one.
      options.log("the saved credential was refused; trying the enrollment token");
      useToken = true;
      retry(0);
      return;
    }
    if (fatal) {
      options.log(`the hub refused this runner: ${error.message}`);
      clearTimeout(retryTimer);
      socket.disconnect();
      finish(new Error(`refused by the hub: ${error.message}`));
      return;
    }
    options.log(`cannot reach the hub (${error.message}); retrying`);
    if (!socket.active) retry(Math.min(RECONNECT_FIRST_MS * 2 ** refusals++, RECONNECT_MAX_MS));
  });
  socket.on("disconnect", (reason) => {
    options.log(`disconnected from the hub (${reason})`);
    // The hub closed us on purpose (revoked): socket.io does not reconnect by itself then; try once to learn why.
    if (reason === "io server disconnect") socket.connect();
  });

  return {
    done,
    async stop() {
      clearTimeout(retryTimer);
      socket.disconnect();
      await worker.stopAll();
      setProcessRecords(undefined);
      finish();
    },
  };
}

function routed(route: string | undefined): { route?: string } {
  return route ? { route } : {};
}

function readCredential(file: string, hub: string): SavedCredential | undefined {
  try {
    const saved = JSON.parse(fs.readFileSync(file, "utf8")) as SavedCredential;
    return saved.hub === hub && typeof saved.credential === "string" ? saved : undefined;
  } catch {
    // No file yet (first run) or an unreadable one: enroll with the token.
    return undefined;
  }
}

/**
 * The credential changes at every connection (server/runners/hub.ts): written to a file of its own
 * (mode 0600) and renamed over runner.json, so a crash mid-write leaves the old one whole.
 */
function writeCredential(file: string, saved: SavedCredential): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const next = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(next, `${JSON.stringify(saved, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(next, file);
}

/**
 * A session's terminal reads anything under the roots: the credential must be elsewhere (SECURITY.md,
 * "What a runner reaches"). The home is made here when missing, so its real path can be compared.
 */
function refuseCredentialInRoots(guard: RootGuard, file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const real = path.join(fs.realpathSync(path.dirname(file)), path.basename(file));
  const root = guard.rootOf(real);
  if (root)
    throw new Error(
      `the runner's credential file ${real} is inside the root ${root}, where its sessions' terminals could read it: set WORLDLINE_HOME to a folder outside every --root`,
    );
}
