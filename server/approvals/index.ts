export { createBasicGate } from "./basic-gate";
