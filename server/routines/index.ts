export { Routines } from "./service";
export type { RoutineSessions } from "./service";
