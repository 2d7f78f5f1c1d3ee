/** The hosts of Azure OpenAI resources (Azure OpenAI, Azure AI services, AI Foundry). */
const AZURE_HOST = /\.(openai\.azure\.com|cognitiveservices\.azure\.com|services\.ai\.azure\.com)$/i;

/**
 * An Azure OpenAI endpoint of the deployments API (`https://X.openai.azure.com`, optionally with
 * `/openai` or `/openai/deployments/NAME`): called with `api-key` and `api-version`. Azure's
 * `/openai/v1` API is OpenAI's own and is called like any other server.
 */
export function isAzureEndpoint(baseURL: string): boolean {
  if (!URL.canParse(baseURL)) return false;
  const url = new URL(baseURL);
  return AZURE_HOST.test(url.hostname) && !/\/openai\/v1(\/|$)/.test(url.pathname);
}
