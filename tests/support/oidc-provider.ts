import http from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

/**
 * A real OpenID Connect provider (the `oidc-provider` package, as certified) on a free loopback
 * port. Its development login form signs in any name with any password; the person's claims are
 * made from the name (`<name>@example.test`, verified). Consent is granted without asking, as a
 * company's own provider does for its own apps.
 */
export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Registers the hub's callback (known once the hub listens), as an admin registers a client. */
  allowRedirect(uri: string): void;
  close(): Promise<void>;
}

export async function startOidcProvider(): Promise<TestOidcProvider> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = "worldline-hub";
  const clientSecret = "oidc-test-secret-0123456789";
  const redirects: string[] = [];
  let handler: http.RequestListener | null = null;
  server.on("request", (req, res) => {
    if (!handler) {
      res.writeHead(503).end("no client registered yet");
      return;
    }
    handler(req, res);
  });
  // The warnings about the development adapter, keys and interactions are the point here: stay quiet.
  const warn = console.warn;
  const build = () => {
    console.warn = () => undefined;
    try {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: clientId,
            client_secret: clientSecret,
            redirect_uris: redirects,
            token_endpoint_auth_method: "client_secret_post",
          },
        ],
        // Set, so the provider does not print a notice about each default on every sign-in.
        ttl: { AccessToken: 3600, AuthorizationCode: 60, Grant: 3600, IdToken: 3600, Interaction: 600, Session: 3600 },
        claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name", "preferred_username"] },
        findAccount: async (_ctx, id) => ({
          accountId: id,
          claims: async () => ({
            sub: id,
            email: `${id}@example.test`,
            email_verified: true,
            preferred_username: id,
            name: `Test ${id}`,
          }),
        }),
        loadExistingGrant: async (ctx) => {
          const session = ctx.oidc.session;
          const client = ctx.oidc.client;
          if (!session?.accountId || !client) return undefined;
          const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
          grant.addOIDCScope("openid email profile");
          await grant.save();
          return grant;
        },
      });
      handler = provider.callback() as http.RequestListener;
    } finally {
      console.warn = warn;
    }
  };
  return {
    issuer,
    clientId,
    clientSecret,
    allowRedirect(uri) {
      redirects.push(uri);
      build();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
