/** The board's live cards: one per session, rebuilt on every event that can change it. */
export { Board } from "./board";
