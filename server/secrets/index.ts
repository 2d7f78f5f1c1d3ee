export {
  redactSecrets,
  redactForOutput,
  redactKnownValues,
  secretEnvValues,
  heldSecretValues,
  holdSecretValues,
} from "./redact";
export { StreamRedactor } from "./stream";
export { addSecretNames, isSecretName, scrubEnvironment, sealSecretEnvironment } from "./environment";
