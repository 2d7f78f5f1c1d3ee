import { createHmac, timingSafeEqual } from "node:crypto";
import type * as OpenidClient from "openid-client";
import * as z from "zod";
import { WorldlineError, errorMessage } from "../errors";

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

/** What travels in the short-lived cookie between the redirect out and the callback. */
const Pending = z.object({ state: z.string(), nonce: z.string(), verifier: z.string(), next: z.string() }).strict();
type Pending = z.infer<typeof Pending>;

/** The provider must bring the person back within this; the pending cookie lives as long. */
export const OIDC_PENDING_SECONDS = 600;
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** openid-client loads at the first sign-in, not at every bridge's start (~25 ms of modules). */
let library: Promise<typeof OpenidClient> | undefined;
const openidClient = () => (library ??= import("openid-client"));

/** The library and the provider's discovered configuration. */
interface Provider {
  client: typeof OpenidClient;
  config: OpenidClient.Configuration;
}

/**
 * Sign-in with one OpenID Connect provider (authorization code + PKCE, state and nonce), through
 * `openid-client`, a certified relying-party library. The pending state is kept in a cookie
 * signed with the bridge's secret, not in memory, so the callback may land on any bridge of a
 * team deployment.
 */
export class OidcSignIn {
  private provider: Promise<Provider> | undefined;

  constructor(
    private readonly settings: OidcSettings,
    private readonly secret: string,
  ) {}

  get issuer(): string {
    return this.settings.issuer;
  }

  /** The provider's authorization URL and the signed cookie value that must come back with the callback. */
  async start(redirectUri: string, next: string): Promise<{ url: string; pending: string }> {
    const { client, config } = await this.discover();
    const pending: Pending = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      verifier: client.randomPKCECodeVerifier(),
      next,
    };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: "openid email profile",
      code_challenge: await client.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: "S256",
      state: pending.state,
      nonce: pending.nonce,
    });
    return { url: url.href, pending: this.sign(pending) };
  }

  /** Exchanges the callback's code; the verified ID token's claims name the person. */
  async finish(
    callbackUrl: URL,
    pendingCookie: string | undefined,
  ): Promise<{
    next: string;
    identity: {
      issuer: string;
      subject: string;
      email?: string;
      emailVerified?: boolean;
      preferredName?: string;
      displayName?: string;
    };
  }> {
    const pending = this.verify(pendingCookie);
    if (!pending)
      throw new WorldlineError("auth:unauthorized", "The sign-in took too long or was started elsewhere.", {
        details: { sign_in: "expired" },
      });
    const { client, config } = await this.discover();
    let tokens: Awaited<ReturnType<typeof OpenidClient.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
    } catch (error) {
      throw new WorldlineError(
        "auth:unauthorized",
        `The identity provider did not sign you in: ${errorMessage(error)}`,
        {
          details: { sign_in: "refused" },
        },
      );
    }
    const idToken = tokens.claims();
    if (!idToken)
      throw new WorldlineError("auth:unauthorized", "The identity provider sent no ID token.", {
        details: { sign_in: "refused" },
      });
    // Providers may keep email and name out of the ID token and answer them at UserInfo (its
    // subject must be the ID token's, which openid-client checks); without it the token's own claims do.
    const profile = tokens.access_token
      ? // No UserInfo (refused, unreachable): the ID token's claims serve.
        await client.fetchUserInfo(config, tokens.access_token, idToken.sub).catch(() => null)
      : null;
    const claims = { ...profile, ...idToken } as Record<string, unknown> & typeof idToken;
    const text = (value: unknown) => (typeof value === "string" && value.length > 0 ? value : undefined);
    return {
      next: pending.next,
      identity: {
        issuer: claims.iss,
        subject: claims.sub,
        email: text(claims.email),
        emailVerified: claims.email_verified === true,
        preferredName: text(claims.preferred_username),
        displayName: text(claims.name),
      },
    };
  }

  private discover(): Promise<Provider> {
    const issuer = new URL(this.settings.issuer);
    // Plain HTTP only to a provider on this machine (a test's, or one behind a local proxy).
    const insecure = issuer.protocol === "http:" && LOOPBACK.has(issuer.host.replace(/:\d+$/, ""));
    this.provider ??= openidClient()
      .then(async (client) => {
        const { clientId, clientSecret } = this.settings;
        const execute = insecure ? { execute: [client.allowInsecureRequests] } : undefined;
        return { client, config: await client.discovery(issuer, clientId, clientSecret, undefined, execute) };
      })
      .catch((error: unknown) => {
        // Not remembered: the provider may be back for the next sign-in.
        this.provider = undefined;
        throw new WorldlineError(
          "auth:unavailable",
          `The identity provider ${this.settings.issuer} could not be reached: ${errorMessage(error)}`,
        );
      });
    return this.provider;
  }

  private sign(pending: Pending): string {
    const body = Buffer.from(JSON.stringify({ ...pending, exp: Date.now() + OIDC_PENDING_SECONDS * 1000 })).toString(
      "base64url",
    );
    return `${body}.${this.mac(body)}`;
  }

  private verify(cookie: string | undefined): Pending | null {
    const [body, mac] = (cookie ?? "").split(".");
    if (!body || !mac) return null;
    const expected = Buffer.from(this.mac(body));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
    try {
      const { exp, ...rest } = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as { exp?: unknown };
      if (typeof exp !== "number" || exp < Date.now()) return null;
      return Pending.parse(rest);
    } catch {
      return null; // Signed by us yet unreadable: treated like a missing cookie.
    }
  }

  private mac(body: string): string {
    return createHmac("sha256", this.secret).update(`worldline-oidc:${body}`).digest("base64url");
  }
}
