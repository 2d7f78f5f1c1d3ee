/** The board's live cards (DESIGN.md §15): one per session, rebuilt on every event that can change it. */
export { Board } from "./board";
