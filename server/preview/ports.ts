import { readdir, readFile, readlink } from "node:fs/promises";

/** A TCP port a process listens on, as the kernel reports it. */
export interface ListeningSocket {
  port: number;
  pid: number;
  command: string;
}

/** Characters of a command line kept for the port list; a dev server's arguments can be long. */
const MAX_COMMAND_CHARS = 200;

/** The kernel's state number for LISTEN in /proc/net/tcp{,6} (include/net/tcp_states.h). */
const TCP_LISTEN = "0A";

/**
 * The inodes of TCP sockets listening on loopback or on every address (ports a proxy on this
 * machine can reach at 127.0.0.1), mapped to their ports. Read from /proc/net/tcp and tcp6.
 */
export async function listeningInodes(): Promise<Map<string, number>> {
  const inodes = new Map<string, number>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch {
      continue; // No IPv6 (or no procfs): nothing listens there.
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || fields[3] !== TCP_LISTEN) continue;
      const [address, portHex] = fields[1].split(":");
      if (!reachableOnLoopback(address)) continue;
      inodes.set(fields[9], Number.parseInt(portHex, 16));
    }
  }
  return inodes;
}

/** 0.0.0.0, 127.x.x.x (little-endian hex), ::, ::1 and ::ffff:127.x.x.x. */
function reachableOnLoopback(hex: string): boolean {
  if (hex.length === 8) return hex === "00000000" || hex.endsWith("7F");
  if (/^0+$/.test(hex) || hex === "00000000000000000000000001000000") return true;
  return hex.startsWith("0000000000000000FFFF0000") && hex.endsWith("7F");
}

/**
 * Which of `pids` hold which of the listening sockets: each process's descriptors are read from
 * /proc/<pid>/fd (`socket:[inode]`). A port held by several processes (a forking server) is named
 * once, by the first pid given.
 */
export async function socketsOf(pids: readonly number[], inodes: Map<string, number>): Promise<ListeningSocket[]> {
  const found = new Map<number, ListeningSocket>();
  for (const pid of pids) {
    for (const inode of await socketInodes(pid)) {
      const port = inodes.get(inode);
      if (port === undefined || found.has(port)) continue;
      found.set(port, { port, pid, command: await commandLine(pid) });
    }
  }
  return [...found.values()].sort((a, b) => a.port - b.port);
}

async function socketInodes(pid: number): Promise<string[]> {
  let fds: string[];
  try {
    fds = await readdir(`/proc/${pid}/fd`);
  } catch {
    return []; // Gone while we looked, or not ours to read.
  }
  const inodes: string[] = [];
  for (const fd of fds) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => ""); // closed while we looked
    const match = /^socket:\[(\d+)\]$/.exec(target);
    if (match) inodes.push(match[1]);
  }
  return inodes;
}

async function commandLine(pid: number): Promise<string> {
  const raw = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => ""); // gone: no name
  return raw.replace(/\0+$/, "").split("\0").join(" ").slice(0, MAX_COMMAND_CHARS);
}
