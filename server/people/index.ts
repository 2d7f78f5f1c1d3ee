export { People, SIGN_IN_LIFETIME_MS } from "./service";
export type { Person, PersonCredential } from "./service";
export { Credentials, CredentialEnded, endsCredential, expiryOf } from "./credentials";
export type { Credential } from "./credentials";
export { OidcSignIn, OIDC_PENDING_SECONDS } from "./oidc";
export {
  httpNeed,
  sessionHttpAllowed,
  sessionSocketAllowed,
  socketNeed,
  roleAtLeast,
  mayDrive,
  requireRole,
} from "./policy";
export type { Level } from "./policy";
