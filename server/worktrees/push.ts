import { WorldlineError } from "../errors";
import { git, gitFailure, runGit, type GitHost } from "./git";

/**
 * Pushes the branch. `remote` is a configured remote's name or a URL/path; absent,
 * the branch's own remote, else `origin`, else the only remote. A named remote gets the branch as
 * upstream (and so a remote-tracking ref, which is what "pushed" means to archive).
 */
export async function pushBranch(
  host: GitHost,
  input: {
    repo: string;
    branch: string;
    remote?: string;
  },
): Promise<{ remote: string; url: string }> {
  const remotes = (await git(host, { cwd: input.repo, args: ["remote"] })).split("\n").filter(Boolean);
  const remote = input.remote ?? (await defaultRemote(host, input.repo, input.branch, remotes));
  const named = remotes.includes(remote);
  if (!named && !/[/:]/.test(remote))
    throw new WorldlineError(
      "push:bad_ref",
      `No remote "${remote}" in ${input.repo} (remotes: ${remotes.join(", ") || "none"}).`,
    );
  const url = named ? (await git(host, { cwd: input.repo, args: ["remote", "get-url", remote] })).trim() : remote;
  const refspec = `refs/heads/${input.branch}:refs/heads/${input.branch}`;
  const pushed = await runGit(host, {
    cwd: input.repo,
    args: ["push", "--porcelain", ...(named ? ["--set-upstream"] : []), remote, refspec],
    network: true,
  });
  if (pushed.code !== 0)
    throw new WorldlineError("push:refused", `The remote refused the push. ${gitFailure(["push"], pushed)}`);
  return { remote, url };
}

async function defaultRemote(host: GitHost, repo: string, branch: string, remotes: string[]): Promise<string> {
  const configured = await runGit(host, { cwd: repo, args: ["config", "--get", `branch.${branch}.remote`] });
  if (configured.code === 0 && configured.stdout.trim()) return configured.stdout.trim();
  if (remotes.includes("origin")) return "origin";
  if (remotes.length === 1) return remotes[0];
  throw new WorldlineError(
    "push:bad_ref",
    remotes.length === 0 ? `${repo} has no remote to push to.` : `Say which remote: ${remotes.join(", ")}.`,
  );
}

/**
 * Where to open a pull request for `branch` against `base`, from the remote's URL: GitHub,
 * GitLab and Bitbucket (their hosted sites, or a host whose name says which it is); null otherwise.
 */
export function compareUrl(remoteUrl: string, branch: string, base: string | null): string | null {
  const located = hostAndPath(remoteUrl);
  if (!located) return null;
  const { host, repoPath } = located;
  const site = `https://${host}/${repoPath}`;
  const source = encodeURIComponent(branch);
  if (/github/i.test(host))
    return base
      ? `${site}/compare/${encodeURIComponent(base)}...${source}?expand=1`
      : `${site}/compare/${source}?expand=1`;
  if (/gitlab/i.test(host)) {
    const target = base ? `&merge_request%5Btarget_branch%5D=${encodeURIComponent(base)}` : "";
    return `${site}/-/merge_requests/new?merge_request%5Bsource_branch%5D=${source}${target}`;
  }
  if (/bitbucket/i.test(host))
    return `${site}/pull-requests/new?source=${source}${base ? `&dest=${encodeURIComponent(base)}` : ""}`;
  return null;
}

/** `git@host:owner/repo.git`, `ssh://git@host[:port]/owner/repo.git`, `https://[user@]host/owner/repo[.git]`. */
function hostAndPath(url: string): { host: string; repoPath: string } | null {
  const scp = /^[\w.-]+@([\w.-]+):(?!\/)(.+?)(?:\.git)?\/?$/.exec(url);
  if (scp) return { host: scp[1], repoPath: scp[2] };
  const full = /^(?:https?|ssh|git):\/\/(?:[^@/]+@)?([\w.-]+)(?::\d+)?\/(.+?)(?:\.git)?\/?$/.exec(url);
  if (full) return { host: full[1], repoPath: full[2] };
  return null;
}
