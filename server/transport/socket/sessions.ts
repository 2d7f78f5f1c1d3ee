import type { Socket } from "socket.io";
import {
  clientCommands,
  encodeSnapshot,
  imageDataUrl,
  type EventEnvelope,
  type SubscribeResult,
  type TranscriptSnapshot,
} from "../../protocol";
import { SNAPSHOT_MIN_EVENTS, SnapshotCache } from "../../sessions";
import type { BridgeServices } from "../services";
import { onCommand, type CommandCache } from "./handler";
import type { Presence } from "./presence";

/** One folded-state cache per bridge (per event log). */
const snapshotCaches = new WeakMap<object, SnapshotCache>();

function snapshotsOf(services: BridgeServices): SnapshotCache {
  let cache = snapshotCaches.get(services.log);
  if (!cache) {
    cache = new SnapshotCache(services.log);
    snapshotCaches.set(services.log, cache);
  }
  return cache;
}

/**
 * Where a tab's replay starts. A tab whose last event is not in this log (it claims a seq
 * past the end, or the log holds another event there: events fanned out but lost by a
 * crash before they were written) is reset. A tab with nothing (or reset) on a long
 * session starts from the folded snapshot instead of every delta since the start.
 */
async function startingPoint(
  services: BridgeServices,
  snapshots: SnapshotCache,
  sessionId: string,
  afterSeq: number,
  afterCreatedAt: string | undefined,
): Promise<{ from: number; snapshot?: TranscriptSnapshot; reset: boolean }> {
  let reset = false;
  if (afterSeq > 0) {
    const at = await services.log.createdAtOf(sessionId, afterSeq);
    reset = at === null || (afterCreatedAt !== undefined && at !== afterCreatedAt);
  }
  if (afterSeq > 0 && !reset) return { from: afterSeq, reset };
  if (services.log.lastSeq(sessionId) < SNAPSHOT_MIN_EVENTS) return { from: 0, reset };
  const state = await snapshots.current(sessionId);
  return { from: state.lastSeq, snapshot: encodeSnapshot(state), reset };
}

/** A tab's view of sessions: subscribe with the last seq it has, then live events. */
export function registerSessionHandlers(
  socket: Socket,
  services: BridgeServices,
  commands: CommandCache,
  presence: Presence,
): void {
  const snapshots = snapshotsOf(services);
  const subscriptions = new Map<string, () => void>();

  onCommand(
    socket,
    "session.subscribe",
    clientCommands["session.subscribe"],
    async ({ sessionId, afterSeq = 0, afterCreatedAt }): Promise<SubscribeResult> => {
      await services.sessions.get(sessionId);
      subscriptions.get(sessionId)?.();
      // Live events that arrive while the past is read are held, then de-duplicated by seq.
      let replaying = true;
      const held: EventEnvelope[] = [];
      let sentUpTo = afterSeq;
      // Events appended in one synchronous run go out as one message: engine.io sends one
      // write at a time, so a burst sent event by event would wait on each write's callback.
      let batch: EventEnvelope[] = [];
      const sendBatch = () => {
        const events = batch;
        batch = [];
        if (socket.connected) socket.emit("session.events", { sessionId, events });
      };
      const stopLive = services.log.subscribe(sessionId, (event) => {
        if (replaying) return void held.push(event);
        if (event.seq <= sentUpTo) return;
        sentUpTo = event.seq;
        batch.push(event);
        if (batch.length === 1) queueMicrotask(sendBatch);
      });
      subscriptions.set(sessionId, () => {
        stopLive();
        presence.leave(socket, sessionId);
      });
      try {
        const start = await startingPoint(services, snapshots, sessionId, afterSeq, afterCreatedAt);
        const past = await services.log.read(sessionId, start.from);
        const events = past.concat(held.filter((event) => event.seq > (past.at(-1)?.seq ?? start.from)));
        sentUpTo = events.at(-1)?.seq ?? start.from;
        replaying = false;
        presence.join(socket, sessionId);
        return {
          events,
          lastSeq: sentUpTo,
          ...(start.snapshot ? { snapshot: start.snapshot } : {}),
          ...(start.reset ? { reset: true } : {}),
        };
      } catch (error) {
        subscriptions.get(sessionId)?.();
        subscriptions.delete(sessionId);
        throw error;
      }
    },
  );

  onCommand(socket, "session.unsubscribe", clientCommands["session.unsubscribe"], async ({ sessionId }) => {
    subscriptions.get(sessionId)?.();
    subscriptions.delete(sessionId);
    return null;
  });

  onCommand(socket, "presence.typing", clientCommands["presence.typing"], async ({ sessionId, typing }) => {
    if (subscriptions.has(sessionId)) presence.typing(socket, sessionId, typing);
    return null;
  });

  onCommand(socket, "presence.focus", clientCommands["presence.focus"], async ({ sessionId, focused }) => {
    if (subscriptions.has(sessionId)) presence.focus(socket, sessionId, focused);
    return null;
  });

  onCommand(
    socket,
    "turn.prompt",
    clientCommands["turn.prompt"],
    async ({ sessionId, text, reasoning, images }) => {
      // The model gets the full images; the transcript event only their previews (server/protocol/images.ts).
      const attached = images?.length
        ? { images: images.map(imageDataUrl), imagePreviews: images.map((image) => image.preview) }
        : {};
      const started = await services.turns.prompt(sessionId, text, { reasoning, ...attached });
      presence.prompted(socket, sessionId, started.turnId);
      return { turnId: started.turnId, queued: started.queued };
    },
    commands,
  );

  onCommand(
    socket,
    "turn.steer",
    clientCommands["turn.steer"],
    async ({ sessionId, text }) => services.turns.steer(sessionId, text),
    commands,
  );

  onCommand(
    socket,
    "session.compact",
    clientCommands["session.compact"],
    async ({ sessionId, focus }) => {
      const started = await services.turns.compact(sessionId, focus);
      return { turnId: started.turnId, queued: started.queued };
    },
    commands,
  );

  onCommand(
    socket,
    "turn.cancel",
    clientCommands["turn.cancel"],
    async ({ sessionId }) => ({ cancelled: await services.turns.cancel(sessionId) }),
    commands,
  );

  socket.on("disconnect", () => {
    for (const unsubscribe of subscriptions.values()) unsubscribe();
    subscriptions.clear();
  });
}
