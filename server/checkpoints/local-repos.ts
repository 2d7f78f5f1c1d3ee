import { openShadowRepo, type ShadowRepo } from "./shadow-repo.ts";
import type { ShadowRepoOptions } from "./types.ts";

/**
 * This machine's shadow repositories, one per workspace, opened once and kept (a failed open is
 * tried again next time; its caller got the error). The local host's `snapshots` (server/host),
 * built at the composition root.
 */
export class LocalShadowRepos {
  private readonly repos = new Map<string, Promise<ShadowRepo>>();

  constructor(private readonly options: ShadowRepoOptions & { home: string }) {}

  open(workspace: string): Promise<ShadowRepo> {
    let repo = this.repos.get(workspace);
    if (!repo) {
      repo = openShadowRepo(workspace, this.options);
      repo.catch(() => this.repos.delete(workspace));
      this.repos.set(workspace, repo);
    }
    return repo;
  }
}
