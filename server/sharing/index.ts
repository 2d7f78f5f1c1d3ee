export { ShareLinks, hashToken } from "./service";
export type { ShareCapability } from "./service";
export { httpVerdict, pageAllowed, socketVerdict } from "./policy";
