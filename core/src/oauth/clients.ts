import { createLocalJWKSet, createRemoteJWKSet, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { DEFAULT_GRANT_TYPES, type AppConfig } from '../config/schema.js';
import { sha256 } from '../util/crypto.js';
import type {
  AppSettings,
  AppSettingsLookup,
  ClientAuthMethod,
  ClientPolicy,
  OAuthClient,
} from '@gatehouse-auth/plugin-api';

/** What client authentication needs and grants never see. */
export interface ClientSecrets {
  secretDigest: string | null;
  /** Only for client_secret_jwt (HMAC needs the secret itself). */
  secret: string | null;
  /** The app's public keys (`jwks` or `jwks_uri`): for private_key_jwt and signed request objects. */
  keys: JWTVerifyGetKey | null;
  /**
   * The config named `token_endpoint_auth_method`: only that method is accepted. Without it, a
   * client with a secret may send it by Basic or in the body (RFC 6749 §2.3.1).
   */
  methodPinned: boolean;
  /** A stored app's secret before its last rotation, also accepted until `until` (epoch ms). */
  previous?: { digest: string; until: number };
}

/** A registered app with what authenticates it. */
interface Entry {
  client: OAuthClient;
  secrets: ClientSecrets;
  /** Its entry, parsed (defaults filled in). */
  app: AppConfig;
}

/**
 * Every app: the config's (read-only, fixed at start-up) and a snapshot of those stored in the
 * database (decision 0051), which `replaceStored` swaps whole when they change. Synchronous: a
 * lookup never waits for the database. A config app wins over a stored one with its id.
 */
export class ClientRegistry {
  private readonly clients = new Map<string, Entry>();
  private stored = new Map<string, Entry & { appSettings: AppSettings }>();

  constructor(
    apps: AppConfig[],
    settings: AppSettingsLookup = new Map<string, AppSettings>(),
    /** Plugins' prompt values (`api.prompt`), each with the apps it is on for. */
    private readonly prompts: readonly PromptOf[] = [],
    /** How soon an app's jwks_uri may be fetched again for a kid it does not know (ms). */
    private readonly refetchMs = 30_000,
    /** Plugins' client policies (`api.clientPolicy`), each asked which apps it holds. */
    private readonly policies: readonly ClientPolicy[] = [],
  ) {
    for (const app of apps) {
      const appSettings = settings.get(app.client_id)?.settings ?? {};
      this.clients.set(app.client_id, entryOf(app, appSettings, prompts, refetchMs, policies));
    }
  }

  /**
   * The client policies that hold the app, in plugin order (decision 80): those `client.policies`
   * names, as they were when it was loaded, so a request keeps them if the app is removed meanwhile.
   */
  policiesOf(client: OAuthClient): readonly ClientPolicy[] {
    return this.policies.filter((p) => client.policies?.includes(p.name));
  }

  /** The first refusal of the policies that hold the app at one point (`ask`), or undefined. */
  refusal(client: OAuthClient, ask: (policy: ClientPolicy) => string | undefined): string | undefined {
    for (const policy of this.policiesOf(client)) {
      const reason = ask(policy);
      if (reason) return reason;
    }
    return undefined;
  }

  get(clientId: string): OAuthClient | undefined {
    return (this.clients.get(clientId) ?? this.stored.get(clientId))?.client;
  }

  secretsOf(clientId: string): ClientSecrets | undefined {
    return (this.clients.get(clientId) ?? this.stored.get(clientId))?.secrets;
  }

  all(): OAuthClient[] {
    return [...this.clients.values(), ...this.stored.values()].map((c) => c.client);
  }

  /** An app's entry as the config has it (defaults filled in), a config app's or a stored one's. */
  app(clientId: string): AppConfig | undefined {
    return (this.clients.get(clientId) ?? this.stored.get(clientId))?.app;
  }

  /** Every app's entry: the config's, then the stored ones. */
  apps(): AppConfig[] {
    return [...this.clients.values(), ...this.stored.values()].map((c) => c.app);
  }

  /** Counts the snapshots of stored apps: what is derived from `apps()` is computed again when it moves. */
  get version(): number {
    return this.snapshots;
  }
  private snapshots = 0;

  /** Whether the app is one of the config's (read-only at run time). */
  fromConfig(clientId: string): boolean {
    return this.clients.has(clientId);
  }

  /** What plugins added to a stored app's entry, parsed (config apps': the `appSettings` map). */
  storedSettings(clientId: string): AppSettings | undefined {
    return this.clients.has(clientId) ? undefined : this.stored.get(clientId)?.appSettings;
  }

  /**
   * The apps stored in the database, checked and parsed, replacing the previous snapshot; one
   * with a config app's id is left out (the config wins) and returned, for a warning.
   */
  replaceStored(apps: StoredClient[]): string[] {
    const next = new Map<string, Entry & { appSettings: AppSettings }>();
    const shadowed: string[] = [];
    for (const stored of apps) {
      if (this.clients.has(stored.app.client_id)) {
        shadowed.push(stored.app.client_id);
        continue;
      }
      const entry = entryOf(stored.app, stored.settings.settings, this.prompts, this.refetchMs, this.policies);
      if (stored.previousSecret) entry.secrets.previous = stored.previousSecret;
      next.set(stored.app.client_id, { ...entry, appSettings: stored.settings });
    }
    this.stored = next;
    this.snapshots += 1;
    return shadowed;
  }
}

/** An app stored in the database, checked and parsed as a config app is. */
export interface StoredClient {
  /** Its entry, with `client_secret_sha256` set to its current secret's digest. */
  app: AppConfig;
  settings: AppSettings;
  /** The secret before the last rotation, accepted until `until` (epoch ms). */
  previousSecret?: { digest: string; until: number } | undefined;
}

/** A plugin's prompt value (`api.prompt`) and the apps it is on for. */
type PromptOf = { prompt: string; enabled(client: OAuthClient): boolean };

/** An app as plugins see it (no prompts, no policies): what a client policy's `appIssues` reads. */
export const clientOf = (app: AppConfig, settings: Readonly<Record<string, unknown>>): OAuthClient =>
  entryOf(app, settings, [], 0, []).client;

function entryOf(
  app: AppConfig,
  settings: Readonly<Record<string, unknown>>,
  prompts: readonly PromptOf[],
  refetchMs: number,
  policies: readonly ClientPolicy[],
): Entry {
  const hasSecret = Boolean(app.client_secret || app.client_secret_sha256);
  const authMethod: ClientAuthMethod =
    app.token_endpoint_auth_method ??
    (app.jwks || app.jwks_uri ? 'private_key_jwt' : hasSecret ? 'client_secret_basic' : 'none');
  const entry: Entry = {
    app,
    client: {
      clientId: app.client_id,
      name: app.name ?? app.client_id,
      authMethod,
      isPublic: authMethod === 'none',
      redirectUris: app.redirect_uris,
      postLogoutRedirectUris: app.post_logout_redirect_uris,
      loginPageUrl: app.login_page_url ?? null,
      allowedOrigins: app.allowed_origins,
      grantTypes: app.grant_types ?? DEFAULT_GRANT_TYPES,
      responseTypes: app.response_types,
      scopes: app.scopes,
      loginStages: app.login_stages,
      acrValues: app.acr_values.map((a) => ({ acr: a.acr, stages: a.login_stages })),
      singleFactorMethods: app.single_factor_methods,
      consentRequired: app.consent_required,
      tokenFormat: app.token_format,
      idTokenAlg: app.id_token_signed_response_alg,
      idTokenClaims: app.id_token_claims,
      accessTokenAlg: app.access_token_signed_response_alg,
      accessTokenTtl: app.access_token_ttl,
      refreshTokenTtl: app.refresh_token_ttl,
      idTokenTtl: app.id_token_ttl,
      codeTtl: app.code_ttl,
      requireState: app.require_state ?? null,
      settings,
    },
    secrets: {
      secretDigest: app.client_secret ? sha256(app.client_secret) : (app.client_secret_sha256 ?? null),
      secret: app.client_secret ?? null,
      keys: keySet(app, refetchMs),
      methodPinned: app.token_endpoint_auth_method !== undefined,
    },
  };
  entry.client.prompts = prompts.filter((p) => p.enabled(entry.client)).map((p) => p.prompt);
  entry.client.policies = policies.filter((p) => p.appliesTo(entry.client)).map((p) => p.name);
  return entry;
}

/**
 * An app's public keys: its `jwks`, or its `jwks_uri` fetched (5 s at most) and cached 10
 * minutes; a kid the cached set lacks fetches it again, at most once per `refetchMs`
 * (`oauth.jwks_uri_refetch_seconds`), so a rotated key is picked up and a removed one refused.
 */
function keySet(app: AppConfig, refetchMs: number): JWTVerifyGetKey | null {
  if (app.jwks) return createLocalJWKSet(app.jwks as JSONWebKeySet);
  if (app.jwks_uri) {
    return createRemoteJWKSet(new URL(app.jwks_uri), {
      timeoutDuration: 5000,
      cacheMaxAge: 600_000,
      cooldownDuration: refetchMs,
    });
  }
  return null;
}
