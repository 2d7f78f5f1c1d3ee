export { redactSecrets, redactForOutput, redactKnownValues, secretEnvValues } from "./redact";
export { StreamRedactor } from "./stream";
