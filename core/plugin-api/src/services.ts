import type { KeyObject, SignKeyObjectInput } from 'node:crypto';
import type { RequestHandler, Router } from 'express';
import type {
  BoundDevice,
  CredentialStore,
  DeliveryChannel,
  EventLog,
  History,
  OutboundMessage,
} from './extensions.js';
import type { AccountStore, DependencyState } from './accounts.js';
import type { AppStore } from './client-admin.js';
import type { SigningAlg } from './client.js';
import type { NewEvent } from './extensions.js';
import type { JsonObject, UserRecord } from './values.js';

export interface Clock {
  now(): Date;
}

/** How a queued message is sent and recorded. */
export interface DeliveryOptions {
  /** Give up past this (a code past its expiry is worth nothing). */
  expiresAt: Date;
  /** Strings a provider's error must never carry into logs (the code in the message). */
  secrets?: string[];
  /** Who and what the message is about, for its outcome event. */
  about?: { userId?: string | null; method?: string | null; clientId?: string | null; key?: string | null };
}

/**
 * What the core lends every plugin. Stateless helpers and directories only: plugins keep
 * per-request data in the request context and durable data in the core's stores.
 */
export interface Services {
  readonly clock: Clock;
  /** Encrypts secrets at rest with the server's key (AES-256-GCM). */
  readonly secrets: {
    encrypt(plain: string): string;
    decrypt(sealed: string): string;
    /** HMAC-SHA256 under a server key (base64url): for short codes stored "hashed" beyond offline guessing. */
    mac(value: string): string;
  };
  readonly crypto: {
    randomToken(bytes?: number): string;
    randomDigits(length: number): string;
    sha256(value: string | Buffer): string;
    /** Constant-time string comparison. */
    safeEqual(a: string, b: string): boolean;
  };
  /** The user directory (service `userDirectory`, which a plugin may replace). */
  readonly users: UserDirectory;
  /** The credentials one user enrolled for one method. */
  credentials(userId: string, method: string): CredentialStore;
  readonly events: EventLog;
  /** Recent events, for FDS rules and throttles. */
  readonly history: History;
  readonly channels: {
    /** Sends through the named delivery channel; rejects if it is unknown or the send fails. */
    deliver(channelId: string, message: OutboundMessage): Promise<void>;
    /**
     * Sends in the background: the message is stored (encrypted) and sent at once, then retried
     * with back-off until `expiresAt`; the outcome is an event (`delivery.done` /
     * `delivery.failed`). Resolves once stored, so the caller answers without waiting for the
     * provider. Rejects at once if the channel is unknown or does not send this kind.
     */
    enqueue(channelId: string, message: OutboundMessage, opts: DeliveryOptions): Promise<void>;
    get(channelId: string): DeliveryChannel | undefined;
    /** The ids of the registered channels. */
    ids(): string[];
  };
  /**
   * Runs CPU-heavy work (password hashing) with at most cores − 1 tasks at once, so a burst of
   * logins cannot take every core from the event loop and starve the other endpoints.
   */
  heavy<T>(work: () => Promise<T>): Promise<T>;
  readonly http: {
    /** An express Router for `api.routes.add`, so plugins need no express dependency. */
    createRouter(): Router;
    /** JSON body parser middleware with the core's limits (100 kB; since 1.3 `{ limit }` sets another). */
    json(options?: { limit?: string | number }): RequestHandler;
    /**
     * Since 1.2: `application/x-www-form-urlencoded` parser (forms, RFC 6749 requests) with the
     * core's limits (16 kB, 50 fields; since 1.3 `{ limit, fields }` sets others).
     */
    form(options?: { limit?: string | number; fields?: number }): RequestHandler;
  };
  /** Authenticator devices (docs/devices.md), for device methods: binding one, finding them. */
  readonly devices: {
    /** Starts binding a device to the user: the code, the link and the QR code to show them. */
    startBinding(user: UserRecord, opts: { biometric: boolean }): Promise<JsonObject>;
    /** The user's bound devices (only biometric-bound ones when asked), last used first. */
    ofUser(userId: string, opts?: { biometric?: boolean }): Promise<BoundDevice[]>;
  };
  /** Whether the user proved their email address or phone number (account verification). */
  readonly accounts: {
    verified(user: UserRecord, medium: 'email' | 'sms'): Promise<boolean>;
    /**
     * Since 1.3: records that the user proved `address` for `medium` (a code sent there came
     * back): `verified` is true while it is still their address.
     */
    markVerified(userId: string, medium: 'email' | 'sms', address: string): Promise<void>;
  };
  /**
   * Since 1.3: the core's account operations, unaudited, for the plugin that provides
   * `userAccounts` (@gatehouse-auth/management); others resolve that service instead.
   */
  readonly accountStore: AccountStore;
  /**
   * Since 1.3: the apps table and the registry's view of it, for the plugin that provides
   * `clientAdmin` (@gatehouse-auth/management); others resolve that service instead.
   */
  readonly appStore: AppStore;
  /** Slow salted hashing for passwords and codes (service `passwordHashing`, replaceable). */
  readonly passwordHashing: PasswordHashing;
  /**
   * A service by name: one another plugin provides (`api.provide`), or a core one. Throws when
   * none is registered under that name.
   */
  resolve<T>(name: string): T;
  /** Since 1.3: the server's load, read at each call (a metrics exporter's gauges, decision 67). */
  readonly stats: ServerStats;
  /**
   * Since 1.3: a JWT signed with the server's keys (those of its JWKS; `alg` picks one, the first
   * of `oauth.signing_algs` otherwise), for a kind of token the core does not issue: a
   * back-channel logout token (`logout+jwt`). `typ` must be explicit and `<kind>+jwt`, never the
   * core's own (`JWT` of ID tokens, `at+jwt` of access tokens: RFC 8725 §3.11), so no plugin can
   * sign one of those; the core sets `iss` to the issuer.
   */
  signJwt(typ: string, claims: JsonObject, alg?: SigningAlg): Promise<string>;
}

/** Since 1.3: a sign-in session that ended (`api.sessionEnded`). */
export interface EndedSession {
  /** The user's id (`sub` of the session's tokens) and the session's id (their `sid`). */
  sub: string;
  sid: string;
  /** The apps that got tokens or codes in it. */
  clientIds: string[];
  /** Why: `user` (signed out), `admin`, `password_changed`, … */
  reason: string;
}

/** Since 1.3: told of each ended session before the call that ended it returns. */
export type SessionEndListener = (ended: EndedSession) => void | Promise<void>;

/** Since 1.3: a kind of durable background job (`api.job`). */
export interface BackgroundJob {
  kind: string;
  /** Runs one job; a throw asks for a retry. */
  run(payload: JsonObject): Promise<void>;
  /** Attempts before the job is given up (default 5). */
  maxAttempts?: number;
  /** The fields of the outcome event (`<kind>.done` / `<kind>.failed`): who and what it was about. */
  describe?(payload: JsonObject): Omit<NewEvent, 'type'>;
}

/** Since 1.3: queues one job of a kind `api.job` registered; resolves once it is stored. */
export type EnqueueJob = (payload: JsonObject, expiresAt: Date) => Promise<void>;

/** Finding users by id or by what they sign in with. */
export interface UserDirectory {
  findById(id: string): Promise<UserRecord | null>;
  /** Username, email or phone. */
  findByIdentifier(identifier: string): Promise<UserRecord | null>;
}

/** Argon2id cost parameters (memory in KiB). */
export interface HashCost {
  memoryCost: number;
  timeCost: number;
  parallelism: number;
}

/** Hashes and checks one kind of secret (passwords, backup codes) at one cost. */
export interface SecretHasher {
  hash(secret: string): Promise<string>;
  verify(storedHash: string, secret: string): Promise<boolean>;
  /** Whether a stored hash was made with other parameters than this hasher's (rehash it on a login). */
  needsRehash?(storedHash: string): boolean;
}

/**
 * The `passwordHashing` service: slow, salted hashing for secrets people choose or read out.
 * A plugin may replace it (`provides: ['passwordHashing']`), e.g. with a hasher in an HSM.
 */
export interface PasswordHashing {
  /** A hasher with this cost; hashes it made stay verifiable whatever the cost later is. */
  withCost(cost: HashCost): SecretHasher;
}

/**
 * Since 1.3: the `sharedCounters` service, where the limits that hold across nodes count (the
 * /authorize per-address limit, plugins' `web.limit`): the database's `rate_windows` unless a
 * plugin replaces it (`@gatehouse-auth/limits-redis`, decision 72). Keys reach it hashed and short.
 */
export interface SharedCounters {
  /**
   * Counts one hit on `key`: the count in its window (which starts at the key's first hit and
   * lasts `windowMs`) and when the window ends (epoch ms). A store may let hits through while it
   * does not answer by answering `{ count: 0, resetsAt: now }`; a throw fails the request.
   */
  hit(key: string, windowMs: number): Promise<{ count: number; resetsAt: number }>;
  /** Called once when the server stops, after its last request. */
  close(): Promise<void>;
}

/** Since 1.3: what node:crypto's `sign()` takes for one key: the digest (null for EdDSA) and the key with its options. */
export type SigningArgs = [digest: string | null, key: KeyObject | SignKeyObjectInput];

/**
 * Since 1.3: the `jwtSigning` service, which makes the signature of the JWTs the token endpoint
 * issues (decision 77): node:crypto on the event loop unless a plugin replaces it
 * (`@gatehouse-auth/worker-threads` signs on worker threads). The core chooses the key, the
 * algorithm, the header and the claims; a provider is handed the private key to sign with, so
 * listing one trusts it with the signing keys (as a `passwordHashing` provider sees passwords).
 */
export interface JwtSigning {
  /** The base64url signature of `input` under `args`; `key` is the same key, stable per key (a cache key). */
  sign(key: KeyObject, args: SigningArgs, input: string): Promise<string>;
}

/**
 * Since 1.3: one argon2id job, what the core's `argon2Hashing` asks of the place it hashes in
 * (`@gatehouse-auth/core`'s in-process default, or worker threads): make a hash, or check a
 * secret against one (false, not an error, for a string that is not an argon2 hash).
 */
export type HashJob = { op: 'hash'; secret: string; cost: HashCost } | { op: 'verify'; secret: string; hash: string };
/** Since 1.3: what a revocation invalidates: tokens by key (hash), every token of grants, of subjects. */
export interface Invalidation {
  keys?: string[];
  grants?: string[];
  subjects?: string[];
}

/** Since 1.3: what one node tells the others (decisions 29, 51). */
export interface PeerNews {
  /** Tokens revoked: drop them from the token cache. */
  revoked?: Invalidation;
  /** Client authentication blocks (client id and address, until epoch ms). */
  blocked?: { key: string; until: number }[];
  /** Apps stored in the database changed: load them again (decision 0051). */
  clients?: boolean;
}

/**
 * Since 1.3: the `peerBus` service, which carries the news every node must hear at once to the
 * other nodes of a deployment (decision 87): between servers on one PostgreSQL database, and
 * between the cluster workers of `server.workers`. `@gatehouse-auth/peer-bus` provides
 * it. The core's own bus reaches only this process: without a provider, start-up stops on
 * PostgreSQL and with `server.workers` other than 1. A provider runs the protocol and trusts
 * nobody's cache to be fresh that it has not heard from: `publish` answers once every live peer
 * has applied the news (or after a short timeout), and `link.down()` while news may be missed.
 */
export interface PeerBusService {
  /**
   * Connects once every plugin has registered, before the first request; a rejection stops
   * start-up. From then on the news of the other nodes goes to `link.deliver`.
   */
  open(link: PeerLink): Promise<void>;
  /**
   * Tells every other node (the core delivered it here already); resolves once every live peer
   * has applied it, so a revocation is answered only after the others dropped what it revokes.
   */
  publish(news: PeerNews): Promise<void>;
  /** Called once when the server stops, after its last request; no reconnecting after it. */
  close(): Promise<void>;
}

/** What the core hands `PeerBusService.open`. */
export interface PeerLink {
  /** The deployment's `database.url`: every node of a PostgreSQL deployment reaches that server. */
  readonly databaseUrl: string;
  /** Hands another node's news to this node's caches; resolves once they applied it (then acknowledge). */
  deliver(news: PeerNews): Promise<void>;
  /** News from the others can no longer be missed: the caches may be used. */
  up(): void;
  /** News from the others may be missed (the connection is lost): the caches are off meanwhile. */
  down(): void;
}

/** A check of one thing the server depends on: resolves when it is up, throws (saying why) when not. */
export type DependencyCheck = () => Promise<unknown>;

/**
 * Since 1.3: a PostgreSQL pool's connections, or SQLite's group-commit batch waiting for the end
 * of the turn and the WAL's size in pages when the checkpointer last looked.
 */
export type DatabaseStats =
  | { dialect: 'postgres'; total: number; idle: number; waiting: number }
  | { dialect: 'sqlite'; pendingWrites: number; walPages: number };

/** Since 1.3: read-only figures of this process's load, read when asked (`services.stats`). */
export interface ServerStats {
  /** Which database figures there are: a pool's (PostgreSQL) or the write batch's (SQLite). */
  readonly dialect: DatabaseStats['dialect'];
  database(): DatabaseStats;
  /** Password and code hashes running and waiting in the CPU-heavy-work limiter. */
  hashing(): { running: number; waiting: number };
  /** Background jobs (deliveries, logout notices) this process is running. */
  jobsRunning(): number;
  /** The dependencies' states: the database and what plugins check (at most every 10 s). */
  dependencies(): Promise<DependencyState[]>;
}
