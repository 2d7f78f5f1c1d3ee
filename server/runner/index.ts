/** `worldline runner`: the process on a machine with code, serving its folders to a hub it dials. */
export { runRunner } from "./client";
