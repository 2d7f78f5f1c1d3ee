import type { RiskLevel } from "../types";

/** The tables shell/classify.ts decides by: which programs read, write, delete, reach the network or run code. */

export const RISK_ORDER: RiskLevel[] = ["none", "low", "medium", "high"];
// Later is more consequential; the line's action is the most consequential one seen.
export const ACTION_ORDER = [
  "read_only",
  "git_read",
  "package_check",
  "unknown",
  "process",
  "execute",
  "git_write",
  "file_write",
  "network",
  "package_install",
  "file_delete",
  "privileged",
] as const;
/** What a command does, from least to most consequential. */
export type ActionType = (typeof ACTION_ORDER)[number];

/** Read-only commands that run without approval when simple and confined to the workspace (see shellApproval). */
export const ALLOWLIST = new Set([
  "ls",
  "pwd",
  "cat",
  "head",
  "tail",
  "echo",
  "wc",
  "git status",
  "git diff",
  "git log",
]);

/** A set of program names from space-separated lines (long lists read better wrapped). */
function words(...lines: string[]): Set<string> {
  return new Set(lines.join(" ").split(" "));
}

export const READ_ONLY = words(
  "ls pwd cat head tail echo printf wc which whoami date uname hostname id true false stat file du df",
  "tree realpath readlink basename dirname grep egrep fgrep rg ag sort uniq cut tr column diff cmp less",
  "more jq nl ps pgrep top htop lsof printenv type test [ seq sleep cd pushd popd history free uptime",
  "locale tput md5sum sha1sum sha256sum shasum cksum od hexdump xxd strings man help",
);
export const PRIVILEGED = words(
  "su doas pkexec mount umount systemctl service shutdown reboot halt poweroff fdisk parted iptables",
  "nft ufw useradd userdel usermod groupadd passwd chroot launchctl visudo insmod modprobe rmmod sysctl",
);
export const NETWORK = new Set("curl wget ssh scp sftp rsync nc ncat netcat telnet ftp socat http https".split(" "));
export const NETWORK_READ = new Set("ping dig nslookup host traceroute".split(" "));
export const FILE_WRITE = new Set(
  "touch mkdir cp mv ln tee install patch chmod truncate split tar unzip zip gzip gunzip bzip2 xz 7z".split(" "),
);
export const FILE_DELETE = new Set("rm rmdir unlink shred".split(" "));
export const PROCESS = new Set("kill pkill killall renice open xdg-open disown".split(" "));
export const EXECUTE = words(
  "node python python3 ruby perl php java deno bun tsx ts-node make cmake ninja gcc g++ cc clang rustc",
  "javac go cargo tsc vitest jest pytest mocha docker podman kubectl terraform",
);
/** Programs whose non-option arguments are all files. */
export const FILE_ARGUMENT_PROGRAMS = words(
  "ls cat head tail wc less more stat file du tree nl od hexdump xxd strings md5sum sha1sum sha256sum",
  "rm rmdir unlink shred cp mv touch mkdir ln tee chmod chown chgrp truncate",
);
export const SHELLS = new Set(["bash", "sh", "zsh", "dash", "ksh", "fish"]);
export const PACKAGE_MANAGERS = words(
  "npm yarn pnpm bun pip pip3 uv poetry pipenv conda gem cargo go brew apt apt-get dnf yum pacman apk",
  "composer bundle",
);
export const PACKAGE_INSTALL_SUBCOMMANDS = new Set(
  "install i ci add update upgrade up remove uninstall rm un unlink link get dlx x sync dist-upgrade".split(" "),
);
export const PACKAGE_CHECK_SUBCOMMANDS = words(
  "ls list outdated view info show why explain doctor search freeze check audit config --version -v",
  "version help env tree",
);
export const GIT_READ = words(
  "status diff log show blame rev-parse ls-files ls-tree describe shortlog grep reflog cat-file show-",
  "ref whatchanged",
);
export const GIT_NETWORK = new Set(["push", "pull", "fetch", "clone", "ls-remote", "submodule"]);
/** Wrappers that run the command after them; their own options are skipped. */
export const WRAPPERS = new Set([
  "env",
  "nice",
  "nohup",
  "time",
  "timeout",
  "command",
  "builtin",
  "exec",
  "stdbuf",
  "ionice",
  "watch",
  "xargs",
  "sudo",
  "doas",
  "coproc",
]);
/** Redirect targets that write nothing. */
export const HARMLESS_TARGETS = /^(\/dev\/(null|stdout|stderr|tty)|&\d*-?)$/;

export const SUBCOMMAND_PROGRAMS = new Set([
  "git",
  "npm",
  "yarn",
  "pnpm",
  "bun",
  "cargo",
  "go",
  "pip",
  "pip3",
  "uv",
  "poetry",
  "docker",
  "podman",
  "kubectl",
  "brew",
  "apt",
  "apt-get",
  "gh",
  "make",
  "npx",
  "deno",
  "dotnet",
  "gradle",
  "mvn",
  "terraform",
  "systemctl",
]);
