import type { FilesPort } from "../host";
import type { RunnerLink } from "./link";

/** The file tree, editor, @-mentions and git markers of a workspace on a runner: one request each. */
export class RemoteFiles implements FilesPort {
  constructor(private readonly link: RunnerLink) {}

  list(root: string, dir: string, showIgnored = false) {
    return this.link.call({ op: "files.list", root, dir, ...(showIgnored ? { ignored: true } : {}) }, { now: true });
  }

  read(root: string, file: string) {
    return this.link.call({ op: "files.read", root, path: file }, { now: true });
  }

  write(root: string, file: string, input: { content: string; baseHash?: string | null; force?: boolean }) {
    return this.link.call({ op: "files.write", root, path: file, ...input }, { now: true });
  }

  search(root: string, query: string, limit = 50) {
    return this.link.call({ op: "files.search", root, query, limit }, { now: true });
  }

  gitStatus(root: string) {
    return this.link.call({ op: "files.gitStatus", root }, { now: true });
  }
}
