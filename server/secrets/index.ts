export { redactSecrets, redactKnownValues, secretEnvValues } from "./redact";
