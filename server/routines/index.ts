export { Routines } from "./service";
export type { RoutineDeps, RoutineInput, RoutineSessions } from "./service";
