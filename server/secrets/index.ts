export { redactSecrets, redactForOutput, redactKnownValues, secretEnvValues, holdSecretValues } from "./redact";
export { StreamRedactor } from "./stream";
export { addSecretNames, scrubEnvironment, sealSecretEnvironment } from "./environment";
