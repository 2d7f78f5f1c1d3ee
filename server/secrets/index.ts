export { redactSecrets, redactSecretShapes, redactForOutput, redactKnownValues, secretEnvValues } from "./redact";
export { StreamRedactor } from "./stream";
