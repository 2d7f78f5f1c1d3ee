import { randomBytes } from "node:crypto";
import type { Socket } from "socket.io";
import type { EventLog } from "../../sessions";
import type { PresenceState, PresenceViewer } from "../../protocol";
import { shareOf } from "./share-guard";
import { personLevelOn } from "./people-guard";
import { noticeOwner, type Notifier } from "../../notify";
import { personOfSocket } from "../people";

/** A "typing" flag not refreshed within this time is dropped (the tab may have died mid-word). */
const TYPING_TTL_MS = 5_000;

/** Prompts remembered for "running in another tab"; far more than can be queued at once. */
const MAX_TRACKED_PROMPTS = 1_000;

interface Viewer {
  socket: Socket;
  id: string;
  device: PresenceViewer["device"];
  access: PresenceViewer["access"];
  typingTimer: NodeJS.Timeout | null;
  focused: boolean;
}

interface Room {
  viewers: Map<string, Viewer>;
  runningBy: string | null;
  runningTurn: string | null;
  stopListening: () => void;
}

/**
 * Who is looking at each session, who is typing, and which tab's prompt is running.
 * Ephemeral (not in the event log), but every tab of a session gets the same state,
 * sent whenever it changes.
 */
export class Presence {
  private readonly rooms = new Map<string, Room>();
  /** The viewer whose prompt created each turn, until the turn starts (then it is the room's runningBy). */
  private readonly promptedBy = new Map<string, string>();

  constructor(
    private readonly log: EventLog,
    /** Told which tabs show a session focused: nobody is pushed about what they watch (server/notify). */
    private readonly notifier?: Notifier,
  ) {}

  join(socket: Socket, sessionId: string): void {
    let room = this.rooms.get(sessionId);
    if (!room) {
      const created: Room = { viewers: new Map(), runningBy: null, runningTurn: null, stopListening: () => undefined };
      created.stopListening = this.log.subscribe(sessionId, (event) => {
        if (event.type === "turn.started") {
          created.runningTurn = event.payload.turnId;
          this.setRunning(sessionId, this.promptedBy.get(event.payload.turnId) ?? null);
        }
        if (event.type === "turn.completed") {
          this.promptedBy.delete(event.payload.turnId);
          created.runningTurn = null;
          this.setRunning(sessionId, null);
        }
      });
      this.rooms.set(sessionId, created);
      room = created;
    }
    if (room.viewers.has(socket.id)) return this.broadcast(sessionId);
    room.viewers.set(socket.id, {
      socket,
      id: viewerIdOf(socket),
      device: deviceOf(socket),
      access: shareOf(socket)?.scope ?? personLevelOn(socket, sessionId) ?? "owner",
      typingTimer: null,
      focused: false,
    });
    this.broadcast(sessionId);
  }

  leave(socket: Socket, sessionId: string): void {
    const room = this.rooms.get(sessionId);
    const viewer = room?.viewers.get(socket.id);
    if (!room || !viewer) return;
    if (viewer.typingTimer) clearTimeout(viewer.typingTimer);
    if (viewer.focused) this.focus(socket, sessionId, false);
    room.viewers.delete(socket.id);
    if (room.viewers.size === 0) {
      room.stopListening();
      this.rooms.delete(sessionId);
      return;
    }
    this.broadcast(sessionId);
  }

  typing(socket: Socket, sessionId: string, typing: boolean): void {
    const viewer = this.rooms.get(sessionId)?.viewers.get(socket.id);
    if (!viewer) return;
    const was = viewer.typingTimer !== null;
    if (viewer.typingTimer) clearTimeout(viewer.typingTimer);
    viewer.typingTimer = typing ? setTimeout(() => this.typing(socket, sessionId, false), TYPING_TTL_MS) : null;
    if (was !== typing) this.broadcast(sessionId);
  }

  /** The tab shows the session in a visible, focused window (true), or no longer does. */
  focus(socket: Socket, sessionId: string, focused: boolean): void {
    const viewer = this.rooms.get(sessionId)?.viewers.get(socket.id);
    if (!viewer || !this.notifier) return;
    viewer.focused = focused;
    const owner = noticeOwner({
      personId: personOfSocket(socket)?.id,
      tokenName: socket.data.tokenName as string | undefined,
    });
    // One row per tab and session; a share link's tab is nobody's, so it hides no one's pushes.
    void this.notifier.focus(`${socket.id}:${sessionId}`, owner, sessionId, focused).catch(() => undefined); // logged by the notifier
  }

  /** Records which tab sent the prompt of `turnId`, so the others can show "running in another tab". */
  prompted(socket: Socket, sessionId: string, turnId: string): void {
    const id = viewerIdOf(socket);
    this.promptedBy.set(turnId, id);
    // Turns that never start (cancelled while queued) must not pile up.
    if (this.promptedBy.size > MAX_TRACKED_PROMPTS)
      this.promptedBy.delete(this.promptedBy.keys().next().value as string);
    // The turn usually starts before the prompt's answer comes back.
    if (this.rooms.get(sessionId)?.runningTurn === turnId) this.setRunning(sessionId, id);
  }

  private setRunning(sessionId: string, viewerId: string | null): void {
    const room = this.rooms.get(sessionId);
    if (!room || room.runningBy === viewerId) return;
    room.runningBy = viewerId;
    this.broadcast(sessionId);
  }

  private broadcast(sessionId: string): void {
    const room = this.rooms.get(sessionId);
    if (!room) return;
    const viewers = [...room.viewers.values()].map(({ id, device, access, typingTimer }) => ({
      id,
      device,
      access,
      typing: typingTimer !== null,
    }));
    const runningBy = room.runningBy && viewers.some((viewer) => viewer.id === room.runningBy) ? room.runningBy : null;
    for (const viewer of room.viewers.values()) {
      viewer.socket.emit("presence.state", { sessionId, viewers, runningBy, you: viewer.id } satisfies PresenceState);
    }
  }
}

function viewerIdOf(socket: Socket): string {
  const data = socket.data as { viewerId?: string };
  data.viewerId ??= randomBytes(6).toString("base64url");
  return data.viewerId;
}

function deviceOf(socket: Socket): PresenceViewer["device"] {
  const agent = socket.handshake.headers["user-agent"] ?? "";
  if (/Mobi|Android|iPhone|iPad/i.test(agent)) return "phone";
  return agent ? "desktop" : "other";
}
