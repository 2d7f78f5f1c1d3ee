"use client";

import * as z from "zod";
import { useCallback, useEffect, useRef, useState } from "react";
import { BoardCard } from "@/server/protocol";
import { command, getSocket, onMessage } from "@/components/transport/client";
import { listCards } from "./fleet-api";

/** `board.subscribe` may answer with every card (then no list is needed to start). */
const SubscribeAnswer = z.union([z.object({ cards: z.array(BoardCard) }).passthrough(), z.array(BoardCard)]);

/**
 * Every session's card, live: the list from `GET /sessions` to start, then `board.card` and
 * `board.removed` from the bridge, subscribed again after each reconnect. Never polls. A card
 * from the feed is newer than the list's, so a list that arrives late never overwrites it.
 */
export function useBoard(showArchived: boolean) {
  const [cards, setCards] = useState<Map<string, BoardCard>>(new Map());
  const [error, setError] = useState<string | null>(null);
  const [loaded, setLoaded] = useState(false);
  /** Ids whose card came from the feed since the last list was asked for. */
  const live = useRef(new Set<string>());

  const apply = useCallback((card: BoardCard) => {
    live.current.add(card.id);
    setCards((current) => new Map(current).set(card.id, card));
  }, []);

  const fromList = useCallback((list: BoardCard[], replace: boolean) => {
    setCards((current) => {
      const next = new Map(replace ? [...current].filter(([id]) => live.current.has(id)) : current);
      for (const card of list) if (!live.current.has(card.id)) next.set(card.id, card);
      return next;
    });
  }, []);

  const reload = useCallback(() => {
    live.current.clear();
    listCards(showArchived).then(
      (list) => {
        fromList(list, true);
        setLoaded(true);
        setError(null);
      },
      (err: Error) => setError(err.message),
    );
  }, [showArchived, fromList]);

  useEffect(() => {
    const socket = getSocket();
    const subscribe = () => {
      command("board.subscribe", {}).then(
        (answer) => {
          const parsed = SubscribeAnswer.safeParse(answer);
          if (parsed.success)
            for (const card of Array.isArray(parsed.data) ? parsed.data : parsed.data.cards) apply(card);
        },
        (err: Error) => setError(`The live board is not available: ${err.message}`),
      );
      // What changed while the connection was down: the list again (cards that came live stay).
      reload();
    };
    const stopCard = onMessage("board.card", apply);
    const stopRemoved = onMessage("board.removed", ({ id }) => {
      live.current.add(id);
      setCards((current) => {
        const next = new Map(current);
        next.delete(id);
        return next;
      });
    });
    socket.on("connect", subscribe);
    if (socket.connected) subscribe();
    else reload();
    return () => {
      socket.off("connect", subscribe);
      stopCard();
      stopRemoved();
      // Leaving the page: the bridge may stop sending cards (a failure only means it was already gone).
      if (socket.connected) command("board.unsubscribe", {}).catch(() => undefined);
    };
  }, [apply, reload]);

  return { cards: [...cards.values()], error, loaded, reload };
}
