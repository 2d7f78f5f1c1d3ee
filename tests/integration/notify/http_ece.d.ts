/** The parts of http_ece (the RFC 8188 reference implementation) the push-service fake uses. */
declare module "http_ece" {
  import type { ECDH } from "node:crypto";
  interface Params {
    version: "aes128gcm";
    privateKey: ECDH;
    authSecret: Buffer;
  }
  const ece: { decrypt(buffer: Buffer, params: Params): Buffer };
  export default ece;
}
