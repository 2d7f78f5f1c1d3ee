export { redactSecrets, redactSecretShapes, redactForOutput, redactKnownValues, secretEnvValues } from "./redact";
