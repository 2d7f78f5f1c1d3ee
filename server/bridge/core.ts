import path from "node:path";
import { resumableTurnIds } from "../agent";
import { readWorkspacePrompt } from "../agent/system-prompt";
import { ApprovalService } from "../approvals";
import { connectRedis } from "../bus";
import { LocalShadowRepos } from "../checkpoints";
import { ProtectedHome, type BridgeConfig } from "../config";
import { errorMessage } from "../errors";
import { WorkspaceFiles } from "../files";
import { LocalWorkspaceHost, WorkspaceHosts } from "../host";
import { OwnerLease, sweepOrphans } from "../leases";
import { ProcessRecords, setProcessRecords } from "../processes";
import { localPtyOpener } from "../pty";
import { RunnerHub } from "../runners";
import { EventLog, resolveWorkspacePath, Sessions, WorkspacePlacement } from "../sessions";
import { listSkills } from "../skills";
import * as store from "../store";
import type { BridgeOptions } from "./options";

/**
 * What every other part stands on: the database, the process records, the bus, the event log and
 * sessions, this process's lease (with the orphan sweep and the start check) and approvals.
 */
export async function openCore(config: BridgeConfig, options: BridgeOptions) {
  const { db } = await store.openDb(config.home, config.databaseUrl);
  // Shell commands, background tasks and terminals a bridge killed with SIGKILL left running.
  const processRecords = new ProcessRecords(path.join(config.home, "run", "processes"));
  // Records of a live process (`worldline acp` next to this one) are left alone.
  const killed = await processRecords.cleanupOrphans();
  if (killed.length > 0)
    process.stderr.write(`[worldline] stopped ${killed.length} process(es) left running by a bridge that died\n`);
  setProcessRecords(processRecords);
  // Team mode: other bridges' appends arrive over Redis; otherwise the database itself is tailed.
  const redis = config.redisUrl ? await connectRedis(config.redisUrl, config.redisPrefix) : null;
  const log = new EventLog(db, redis?.bus);
  // Runners dial this bridge (server/runners); a session on one finds its workspace through its host.
  const runners = new RunnerHub({ db });
  const { files, hosts } = createHosts(config, runners);
  const sessions = new Sessions(
    db,
    log,
    (runner, workspace, options) => hosts.of(runner).checkWorkspace(workspace, options),
    new WorkspacePlacement(new ProtectedHome(config.home), config.hubRoots),
  );
  const lease = new OwnerLease(db, { kind: options.kind ?? "web", ...options.lease });
  const approvals = new ApprovalService({
    db,
    log,
    sessions,
    ownerId: lease.id,
    liveness: (ownerId) => lease.liveness(ownerId),
  });
  // Turns and requests of owners that are gone (killed, crashed) are interrupted now and whenever
  // another dies, except turns waiting on a person: the runtime takes those over once it exists.
  const waiting = { keep: (live: string[]) => resumableTurnIds(db, live) };
  const sweep = () =>
    sweepOrphans({
      db,
      log,
      lease,
      keepWaiting: (live) => waiting.keep(live),
      interruptApprovals: (live, kept) => approvals.interruptOrphans(live, kept),
    });
  await lease.start();
  await sweep();
  lease.onBeat(sweep);
  return { config, db, processRecords, redis, log, runners, files, hosts, sessions, lease, approvals, waiting, sweep };
}

export type Core = Awaited<ReturnType<typeof openCore>>;

/**
 * The host of every workspace (server/host): this machine's, made of the local domains' code
 * (file views, node-pty, shadow repositories, skills, the prompt's files, the folder check),
 * and each runner's (server/runners). Everything that touches a workspace gets it from `hosts`.
 */
function createHosts(config: BridgeConfig, runners: RunnerHub) {
  const { files, host } = thisMachine(config.home);
  const hosts = new WorkspaceHosts(
    host,
    (runner, fence) => runners.hostFor(runner, fence),
    (listener) => {
      const here = files.onChange((workspace, paths) => listener(null, workspace, paths));
      const there = runners.onFilesChanged(listener);
      return () => {
        here();
        there();
      };
    },
  );
  return { files, hosts };
}

/** This machine's host, with WORLDLINE_HOME for its shadow repositories (also for the loop bench). */
export function thisMachine(home: string): { files: WorkspaceFiles; host: LocalWorkspaceHost } {
  // No file route, tool, tree or search of a session opens a file in the data folder.
  const protectedHome = new ProtectedHome(home);
  const files = new WorkspaceFiles({ home: protectedHome });
  const shadowRepos = new LocalShadowRepos({ home });
  const host = new LocalWorkspaceHost(
    {
      files,
      openPty: localPtyOpener(),
      checkWorkspace: resolveWorkspacePath,
      worktreesFolder: async () => path.join(home, "worktrees"),
      snapshots: (workspace) => shadowRepos.open(workspace),
      workspaceSkills: (workspace) => listSkills({ workspace }),
      workspacePrompt: readWorkspacePrompt,
    },
    { home: protectedHome },
  );
  return { files, host };
}

/**
 * The start check: repairs what has one right answer and logs, once, what needs a look
 * (`worldline doctor` lists the same). It never stops the start: the sessions it names still open.
 * A dozen queries, each compiled by Prisma on first use (~40 ms of a start): the HTTP half runs it
 * (server/main.ts, serveParts) beside what follows rather than before it, which is at start for
 * `worldline serve` and after the first reply for `worldline acp`; its repairs are guarded updates,
 * safe alongside. Print mode's one new session needs none of them.
 */
export async function reportConsistency(db: store.Db): Promise<void> {
  try {
    const findings = await store.checkConsistency(db, { fix: true });
    for (const finding of findings) {
      const what = finding.fixed ? "repaired" : "found (see worldline doctor)";
      console.error(
        `[worldline] start check: ${what} ${finding.kind} in session ${finding.sessionId}: ${finding.detail}`,
      );
    }
  } catch (error) {
    console.error(`[worldline] start check failed: ${errorMessage(error)}`); // the bridge serves regardless
  }
}
