import {
  type ClientAuthentication,
  type Clock,
  type EventLog,
  type History,
  type OAuthClient,
  PLUGGABLE_AUTH_METHODS,
} from '@gatehouse-auth/plugin-api';
import { decodeJwt, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { PeerBus } from '../peer-bus.js';
import { safeEqual, safeEqualDigest, sha256 } from '../util/crypto.js';
import type { AssertionReplayStore } from './assertions.js';
import type { ClientRegistry, ClientSecrets } from './clients.js';
import { OAuthError } from './errors.js';
import type { IncomingMessage } from 'node:http';

export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const HMAC_ALGS = ['HS256', 'HS384', 'HS512'];
const ASYMMETRIC_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
export const CLIENT_AUTH_SIGNING_ALGS = [...ASYMMETRIC_ALGS, ...HMAC_ALGS];

/**
 * Failed client authentications per client id and address before /token answers 429 for a while;
 * the admin token's guard (http/admin-guard.ts) allows an address as many.
 */
export const MAX_FAILURES = 20;
export const FAILURE_WINDOW_MS = 5 * 60_000;

export interface ClientAuthInput {
  params: Record<string, string>;
  authorization: string | undefined;
  /** The request, for a method a plugin provides (a client certificate); without it those fail. */
  request?: IncomingMessage;
}

const invalidClient = (why: string) => new OAuthError('invalid_client', why, 401);

/**
 * Client authentication (RFC 6749 §2.3, RFC 7523 §2.2): Basic, body secret, client_secret_jwt,
 * private_key_jwt, or a public client's bare client_id. Exactly one method per request.
 */
export class ClientAuthenticator {
  constructor(
    private readonly deps: {
      clients: ClientRegistry;
      replay: AssertionReplayStore;
      events: EventLog;
      history: History;
      clock: Clock;
      /** Acceptable `aud` values of a client assertion: the issuer and the endpoint URLs. */
      audiences: string[];
      /** The issuer as published (config `issuer` as written): what a client policy's `clientAssertion` compares. */
      issuer: string;
      /** Blocks every node holds (the container's). */
      blocks: ClientBlocks;
      /** The plugin that provides a method (`api.clientAuthentication`), if any. */
      plugged: (method: string) => ClientAuthentication | undefined;
    },
  ) {}

  async authenticate(input: ClientAuthInput, ip: string): Promise<OAuthClient> {
    const { params } = input;
    const basic = parseBasic(input.authorization);
    const methods = [basic, params.client_secret, params.client_assertion].filter(Boolean).length;
    if (methods > 1) throw new OAuthError('invalid_request', 'use exactly one client authentication method');

    if (params.client_assertion || params.client_assertion_type) return this.byAssertion(params, ip);
    const clientId = basic?.id ?? params.client_id;
    if (!clientId) throw invalidClient('client authentication is required');
    if (basic && params.client_id && params.client_id !== basic.id) {
      throw new OAuthError('invalid_request', 'client_id does not match the Authorization header');
    }
    await this.throttle(clientId, ip);
    const client = this.deps.clients.get(clientId);
    const secrets = this.deps.clients.secretsOf(clientId);
    const presented = basic?.secret ?? params.client_secret;
    if (!client || !secrets) {
      // Spend the same comparison as for a known client, then fail alike.
      safeEqual(sha256(presented ?? ''), sha256('unknown-client'));
      return this.unknownClient(ip);
    }
    if (isPluggable(client.authMethod)) return this.byPlugin(client, input, presented, ip);
    if (client.authMethod === 'none') {
      // Not counted: a public client has no secret to guess, and counting would let anyone lock it out.
      if (presented !== undefined) throw invalidClient('a public client has no secret');
      return client;
    }
    if (presented === undefined) return this.fail(clientId, ip, 'client authentication is required');
    const used = basic ? 'client_secret_basic' : 'client_secret_post';
    const allowed =
      client.authMethod === used ||
      (!secrets.methodPinned &&
        (client.authMethod === 'client_secret_basic' || client.authMethod === 'client_secret_post'));
    if (!allowed) return this.fail(clientId, ip, `this client authenticates with ${client.authMethod}`);
    if (!this.secretMatches(presented, secrets)) return this.fail(clientId, ip, 'invalid client credentials');
    return client;
  }

  /**
   * The current secret, or the one before the last rotation while its overlap lasts (decision
   * 0051): both are always compared, so the time taken tells nothing of which matched.
   */
  private secretMatches(presented: string, secrets: ClientSecrets): boolean {
    const digest = sha256(presented);
    const current = secrets.secretDigest !== null && safeEqualDigest(digest, secrets.secretDigest);
    const previous = secrets.previous;
    const old =
      previous !== undefined &&
      safeEqualDigest(digest, previous.digest) &&
      this.deps.clock.now().getTime() < previous.until;
    return current || old;
  }

  /** A method a plugin provides (mutual TLS): the request alone proves the client; no secret beside it. */
  private async byPlugin(
    client: OAuthClient,
    input: ClientAuthInput,
    presented: string | undefined,
    ip: string,
  ): Promise<OAuthClient> {
    const method = client.authMethod;
    if (presented !== undefined) return this.fail(client.clientId, ip, `this client authenticates with ${method}`);
    const plugin = this.deps.plugged(method);
    const verdict =
      plugin && input.request ? await plugin.authenticate(input.request, client) : `no plugin provides ${method}`;
    return verdict === true ? client : this.fail(client.clientId, ip, verdict);
  }

  private async byAssertion(params: Record<string, string>, ip: string): Promise<OAuthClient> {
    if (params.client_assertion_type !== CLIENT_ASSERTION_TYPE || !params.client_assertion) {
      throw new OAuthError(
        'invalid_request',
        `client_assertion_type must be ${CLIENT_ASSERTION_TYPE} with a client_assertion`,
      );
    }
    let unverified: JWTPayload;
    try {
      unverified = decodeJwt(params.client_assertion);
    } catch {
      throw invalidClient('client_assertion is not a JWT');
    }
    const clientId = typeof unverified.sub === 'string' ? unverified.sub : '';
    if (!clientId || (params.client_id && params.client_id !== clientId)) {
      throw invalidClient('client_assertion sub must be the client_id');
    }
    await this.throttle(clientId, ip);
    const client = this.deps.clients.get(clientId);
    const secrets = this.deps.clients.secretsOf(clientId);
    if (!client || !secrets) return this.unknownClient(ip);
    let payload: JWTPayload;
    try {
      const options = {
        issuer: clientId,
        subject: clientId,
        audience: this.deps.audiences,
        requiredClaims: ['exp', 'jti'],
        clockTolerance: 30,
        currentDate: this.deps.clock.now(),
      };
      if (client.authMethod === 'client_secret_jwt' && secrets.secret) {
        ({ payload } = await jwtVerify(params.client_assertion, new TextEncoder().encode(secrets.secret), {
          ...options,
          algorithms: HMAC_ALGS,
        }));
      } else if (client.authMethod === 'private_key_jwt' && secrets.keys) {
        // jose refuses RSA keys under 2048 bits for RS* and PS* (FAPI 2.0 §5.4.1 asks as much).
        // The client policies that hold the app may allow fewer algorithms (decision 80).
        const policies = this.deps.clients.policiesOf(client);
        const algorithms = ASYMMETRIC_ALGS.filter((alg) =>
          policies.every((policy) => policy.assertionAlgorithms?.includes(alg) ?? true),
        );
        ({ payload } = await jwtVerify(params.client_assertion, secrets.keys, { ...options, algorithms }));
      } else {
        return this.fail(clientId, ip, `this client authenticates with ${client.authMethod}`);
      }
    } catch (err) {
      const why = err instanceof joseErrors.JOSEError ? err.message : 'invalid client_assertion';
      return this.fail(clientId, ip, `client_assertion rejected: ${why}`);
    }
    // The client policies that hold the app may ask more of the claims (decision 80), on a copy.
    const refusal = this.deps.clients.refusal(client, (policy) =>
      policy.clientAssertion?.(client, { ...payload }, this.deps.issuer),
    );
    if (refusal) return this.fail(clientId, ip, refusal);
    if (payload.exp! * 1000 - this.deps.clock.now().getTime() > 3600_000) {
      return this.fail(clientId, ip, 'client_assertion expires too far in the future');
    }
    if (
      !(await this.deps.replay.use(`client_assertion:${clientId}`, String(payload.jti), new Date(payload.exp! * 1000)))
    ) {
      return this.fail(clientId, ip, 'client_assertion jti was already used');
    }
    return client;
  }

  /**
   * Refuses a client that failed too often. Costs nothing on the success path: the shared
   * failure count (the events table, across nodes) is read only when an authentication fails,
   * and a block found there is told to every node (the peer bus) before the failure is answered.
   */
  private async throttle(clientId: string, ip: string): Promise<void> {
    if (this.deps.blocks.empty) return; // the common case: no hash to compute
    const now = this.deps.clock.now().getTime();
    const until = this.deps.blocks.until(blockKey(clientId, ip), now);
    if (until === null) return;
    throw new OAuthError('invalid_client', 'too many failed client authentications; retry later', 429, {
      'Retry-After': String(Math.ceil((until - now) / 1000)),
    });
  }

  /**
   * An unregistered client id: no secret to guess, so nothing to throttle; one row a minute per
   * address counts them, since anyone can send any number of made-up ids.
   */
  private async unknownClient(ip: string): Promise<never> {
    await this.deps.events.record({
      type: 'client_auth.failure',
      key: `client-unknown:${sha256(ip)}`,
      ip,
      reason: 'unknown client',
      aggregateSeconds: 60,
    });
    throw invalidClient('unknown client');
  }

  /**
   * Counts a failed authentication per client and IP: secrets are long and random, so the point
   * is to slow one source down, not to let anyone who knows a client_id lock it out for all.
   */
  private async fail(clientId: string, ip: string, why: string): Promise<never> {
    const block = blockKey(clientId, ip);
    const key = `client:${block}`;
    await this.deps.events.record({
      type: 'client_auth.failure',
      key,
      clientId: clientId.slice(0, 255),
      ip,
      reason: why.slice(0, 255),
    });
    const now = this.deps.clock.now().getTime();
    const failures = await this.deps.history.count({
      types: ['client_auth.failure'],
      key,
      since: new Date(now - FAILURE_WINDOW_MS),
      limit: MAX_FAILURES,
    });
    if (failures >= MAX_FAILURES) await this.deps.blocks.block(block, now + FAILURE_WINDOW_MS, now);
    throw invalidClient(why);
  }
}

const isPluggable = (method: string): boolean => (PLUGGABLE_AUTH_METHODS as readonly string[]).includes(method);

/** A client id and an address, hashed: the key of their block, and (prefixed `client:`) of their failures. */
function blockKey(clientId: string, ip: string): string {
  return sha256(`${clientId}\n${ip}`);
}

/**
 * Client ids (per address), and addresses that sent too many wrong admin tokens (keys prefixed
 * `admin:`), refused until a time (epoch ms), after too many failures: on every
 * node at once, as the peer bus carries each block before the failure that caused it is
 * answered. Subscribed when the container starts, so no block is missed.
 */
export class ClientBlocks {
  private readonly blockedUntil = new Map<string, number>();

  constructor(private readonly peers?: PeerBus) {
    peers?.subscribe({
      receive: (news) => {
        for (const b of news.blocked ?? []) this.blockedUntil.set(b.key, b.until);
      },
      connected: () => undefined,
    });
  }

  /** No block at all (ended ones may still be held until looked at). */
  get empty(): boolean {
    return this.blockedUntil.size === 0;
  }

  /** When the block on `key` ends, or null if there is none. */
  until(key: string, now: number): number | null {
    const until = this.blockedUntil.get(key);
    if (until === undefined) return null;
    if (until > now) return until;
    this.blockedUntil.delete(key);
    return null;
  }

  /** Blocks `key` here and on every other node. */
  async block(key: string, until: number, now: number): Promise<void> {
    for (const [k, t] of this.blockedUntil) if (t <= now) this.blockedUntil.delete(k);
    this.blockedUntil.set(key, until);
    await this.peers?.publish({ blocked: [{ key, until }] });
  }
}

const malformed = () => new OAuthError('invalid_request', 'malformed Basic authorization header');

/** RFC 6749 §2.3.1: id and secret are form-urlencoded before Base64. */
export function parseBasic(header: string | undefined): { id: string; secret: string } | null {
  if (!header || !/^Basic\b/i.test(header.trim())) return null;
  const match = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header.trim());
  const decoded = match ? Buffer.from(match[1]!, 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  if (colon < 0) throw malformed();
  try {
    const decode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { id: decode(decoded.slice(0, colon)), secret: decode(decoded.slice(colon + 1)) };
  } catch {
    throw malformed();
  }
}
