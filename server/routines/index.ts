export { Routines } from "./service";
export type { EndedRun, RoutineSessions } from "./service";
