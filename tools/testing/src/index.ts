/**
 * `@gatehouse-auth/testing`: in-memory fakes of the core services, so a plugin can be
 * unit-tested with no server and no database. Not for production use. It imports only the
 * core's public API (`@gatehouse-auth/core`), as a plugin does.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import {
  channelProblems,
  cryptoHelpers,
  fdsRuleProblems,
  grantProblems,
  httpHelpers,
  methodProblems,
  REPLACEABLE_SERVICES,
  promptHandlerProblems,
  requestResolverProblems,
  requestObjectVerifierProblems,
  routeProblems,
  tokenBindingProblems,
  clientAuthenticationProblems,
  clientPolicyProblems,
  SecretBox,
  sendQueued,
  storedEvent,
  argon2Hashing,
  type QueuedDelivery,
  type PasswordHashing,
  type Clock,
  type Services,
  type DependencyCheck,
  type GatehousePlugin,
  type PluginApi,
  type PluginCatalogs,
  type RouteContribution,
  type TokenBinding,
  type ClientAuthentication,
  type WebApi,
  type AuthMethod,
  type AuthorizationRequestResolver,
  type RequestObjectVerifier,
  type PromptHandler,
  type ClientPolicy,
  type SecurityEventListener,
  type SessionEndListener,
  type BackgroundJob,
  type Served,
  type ServingInfo,
  type BoundDevice,
  type Credential,
  type CredentialStore,
  type DeliveryChannel,
  type EventQuery,
  type FdsContext,
  type FdsRule,
  type GrantHandler,
  type History,
  type InitiateContext,
  type JsonObject,
  type NewCredential,
  type NewEvent,
  type OutboundMessage,
  type RecordStore,
  type RequestFacts,
  type StoredEvent,
  type StoredRecord,
  type UserRecord,
  type VerifyContext,
  type EnrollmentContext,
  type ImportContext,
  NO_BRAND,
} from '@gatehouse-auth/core';
import { FakeClock, fakeRequest, silentLogger } from './basics.js';

export { FakeClock, fakeRequest, fakeUser, silentLogger } from './basics.js';

/** Credentials of every user and method, in memory, with the same conditional semantics. */
export class MemoryCredentials {
  readonly rows: Credential[] = [];
  constructor(private readonly clock: Clock) {}

  store(userId: string, method: string): CredentialStore {
    const mine = () => this.rows.filter((c) => c.userId === userId && c.method === method);
    const make = (c: NewCredential): Credential => ({
      id: randomUUID(),
      userId,
      method,
      type: c.type,
      label: c.label ?? null,
      secret: c.secret ?? null,
      data: c.data ?? {},
      counter: c.counter ?? 0,
      usedAt: null,
      createdAt: this.clock.now(),
      deviceId: c.deviceId ?? null,
    });
    return {
      list: async (type) =>
        mine()
          .filter((c) => type === undefined || c.type === type)
          .map((c) => ({ ...c })),
      get: async (id) => {
        const found = mine().find((c) => c.id === id);
        return found ? { ...found } : null;
      },
      add: async (c) => {
        const row = make(c);
        this.rows.push(row);
        return { ...row };
      },
      replaceAll: async (type, list) => {
        for (const old of mine().filter((c) => c.type === type)) this.rows.splice(this.rows.indexOf(old), 1);
        const rows = list.map(make);
        this.rows.push(...rows);
        return rows.map((r) => ({ ...r }));
      },
      remove: async (id) => {
        const found = mine().find((c) => c.id === id);
        if (!found) return false;
        this.rows.splice(this.rows.indexOf(found), 1);
        return true;
      },
      markUsed: async (id) => {
        const found = mine().find((c) => c.id === id);
        if (!found || found.usedAt) return false;
        found.usedAt = this.clock.now();
        return true;
      },
      advanceCounter: async (id, value) => {
        const found = mine().find((c) => c.id === id);
        if (!found || found.counter >= value) return false;
        found.counter = value;
        return true;
      },
      update: async (id, changes) => {
        const found = mine().find((c) => c.id === id);
        if (!found) throw new Error(`no credential ${id}`);
        if (changes.secret !== undefined) found.secret = changes.secret;
        if (changes.data !== undefined) found.data = changes.data;
        if (changes.label !== undefined) found.label = changes.label;
      },
    };
  }
}

/** Event log and history in memory. */
export class MemoryEvents implements History {
  readonly events: StoredEvent[] = [];
  constructor(private readonly clock: Clock) {}

  async record(e: NewEvent): Promise<void> {
    const at = this.clock.now();
    const event = storedEvent(e, at);
    // As the database does: a repeat in the same window counts up the row it shares.
    const window = e.aggregateSeconds ? e.aggregateSeconds * 1000 : 0;
    const same = window
      ? this.events.find(
          (x) =>
            Math.floor(x.at.getTime() / window) === Math.floor(at.getTime() / window) &&
            (['type', 'key', 'userId', 'method', 'clientId', 'ip', 'outcome', 'reason'] as const).every(
              (f) => x[f] === event[f],
            ),
        )
      : undefined;
    if (same) {
      same.count += 1;
      same.at = at;
    } else this.events.push(event);
  }

  private match(q: EventQuery): StoredEvent[] {
    return this.events
      .filter(
        (e) =>
          (!q.types || q.types.includes(e.type)) &&
          (q.key === undefined || e.key === q.key) &&
          (q.userId === undefined || e.userId === q.userId) &&
          (q.method === undefined || e.method === q.method) &&
          (q.ip === undefined || e.ip === q.ip) &&
          (!q.since || e.at >= q.since),
      )
      .reverse();
  }
  async count(q: EventQuery): Promise<number> {
    const rows = this.match(q);
    return (q.limit === undefined ? rows : rows.slice(0, q.limit)).reduce((n, e) => n + e.count, 0);
  }
  async recent(q: EventQuery): Promise<StoredEvent[]> {
    return this.match(q).slice(0, q.limit ?? 100);
  }
}

export class MemoryRecords implements RecordStore {
  readonly records = new Map<string, StoredRecord>();
  constructor(private readonly clock: Clock) {}
  private live(key: string): StoredRecord | null {
    const r = this.records.get(key);
    if (!r) return null;
    if (r.expiresAt && r.expiresAt <= this.clock.now()) {
      this.records.delete(key);
      return null;
    }
    return r;
  }
  async put(key: string, data: JsonObject, opts: { ttlSeconds?: number } = {}): Promise<void> {
    const now = this.clock.now();
    this.records.delete(key);
    this.records.set(key, {
      key,
      data,
      createdAt: now,
      expiresAt: opts.ttlSeconds ? new Date(now.getTime() + opts.ttlSeconds * 1000) : null,
    });
  }
  async add(key: string, data: JsonObject, opts: { ttlSeconds?: number } = {}): Promise<boolean> {
    if (this.live(key)) return false;
    await this.put(key, data, opts);
    return true;
  }
  async get(key: string) {
    return this.live(key);
  }
  async consume(key: string) {
    const r = this.live(key);
    if (r) this.records.delete(key);
    return r;
  }
  async delete(key: string) {
    return this.live(key) !== null && this.records.delete(key);
  }
  async list(prefix: string, opts: { limit?: number } = {}) {
    return [...this.records.keys()]
      .filter((k) => k.startsWith(prefix))
      .map((k) => this.live(k))
      .filter((r): r is StoredRecord => r !== null)
      .reverse()
      .slice(0, opts.limit ?? 100);
  }
}

/** A channel that keeps what it was asked to send. */
export class CapturingChannel implements DeliveryChannel {
  readonly sent: OutboundMessage[] = [];
  constructor(
    readonly id = 'capture',
    readonly kinds: DeliveryChannel['kinds'] = ['sms', 'email', 'voice', 'push'],
  ) {}
  async send(message: OutboundMessage): Promise<void> {
    this.sent.push(message);
  }
}

export interface FakeServices extends Services {
  clock: FakeClock;
  credentialRows: MemoryCredentials;
  eventLog: MemoryEvents;
  channelMap: Map<string, DeliveryChannel>;
  users: Services['users'] & { add(user: UserRecord): void };
  /** Waits for every message handed to `channels.enqueue` (one attempt each, no retries here). */
  settle(): Promise<void>;
  /** Services plugins provided (`api.provide`), by name; `resolve` reads them. */
  provided: Map<string, unknown>;
  /** Bound authenticator devices by user id (`devices.ofUser` reads them). */
  deviceMap: Map<string, BoundDevice[]>;
  /** The users `devices.startBinding` was called for. */
  bindings: { userId: string; biometric: boolean }[];
  /** `userId:medium` of verified accounts (`accounts.verified` reads them). */
  verifiedAccounts: Set<string>;
}

/** A service with no fake: reading any of its members throws, saying what to do instead. */
function noFake<T extends object>(name: string): T {
  return new Proxy({} as T, {
    get() {
      throw new Error(`fakeServices has no ${name}: test against buildApp`);
    },
  });
}

/** Services backed by memory; `channels` defaults to one CapturingChannel with id 'capture'. */
export function fakeServices(opts: { clock?: FakeClock; channels?: DeliveryChannel[] } = {}): FakeServices {
  const clock = opts.clock ?? new FakeClock();
  const box = new SecretBox([randomBytes(32)]);
  const credentialRows = new MemoryCredentials(clock);
  const eventLog = new MemoryEvents(clock);
  const channelMap = new Map((opts.channels ?? [new CapturingChannel()]).map((c) => [c.id, c]));
  const userMap = new Map<string, UserRecord>();
  const pending = new Set<Promise<void>>();
  const provided = new Map<string, unknown>();
  const deviceMap = new Map<string, BoundDevice[]>();
  const verifiedAccounts = new Set<string>();
  const bindings: FakeServices['bindings'] = [];
  const hashing = argon2Hashing();
  const deliver = async (id: string, message: OutboundMessage) => {
    const channel = channelMap.get(id);
    if (!channel) throw new Error(`unknown delivery channel ${id}`);
    await channel.send(message);
  };
  return {
    clock,
    credentialRows,
    eventLog,
    channelMap,
    secrets: { encrypt: (p) => box.encrypt(p), decrypt: (s) => box.decrypt(s), mac: (v) => box.mac(v) },
    crypto: cryptoHelpers,
    users: {
      add: (u) => void userMap.set(u.id, u),
      findById: async (id) => userMap.get(id) ?? null,
      findByIdentifier: async (i) =>
        [...userMap.values()].find((u) => u.username === i || u.email === i || u.phone === i) ?? null,
    },
    credentials: (userId, method) => credentialRows.store(userId, method),
    events: eventLog,
    history: eventLog,
    channels: {
      get: (id) => channelMap.get(id),
      ids: () => [...channelMap.keys()],
      deliver,
      // As the server's queue does, minus the retries: answer first, send after, record the outcome.
      enqueue: async (id, message, opts) => {
        if (!channelMap.get(id)?.kinds.includes(message.kind)) throw new Error(`unknown delivery channel ${id}`);
        const job: QueuedDelivery = { channel: id, message, secrets: opts.secrets ?? [], about: opts.about ?? {} };
        const sending = new Promise<void>((resolve) => setImmediate(resolve))
          .then(() => sendQueued(deliver, job))
          .then(
            () => eventLog.record({ ...job.about, type: 'delivery.done', outcome: 'done' }),
            (err: Error) =>
              eventLog.record({ ...job.about, type: 'delivery.failed', outcome: 'failed', reason: err.message }),
          )
          .finally(() => pending.delete(sending));
        pending.add(sending);
      },
    },
    settle: async () => {
      while (pending.size) await Promise.allSettled([...pending]);
    },
    heavy: (work) => work(),
    http: httpHelpers,
    // An idle server on SQLite: no writes waiting, nothing hashing, no jobs, no dependencies.
    stats: {
      dialect: 'sqlite',
      database: () => ({ dialect: 'sqlite', pendingWrites: 0, walPages: 0 }),
      hashing: () => ({ running: 0, waiting: 0 }),
      jobsRunning: () => 0,
      dependencies: async () => [],
    },
    // Real argon2id: tests pass a low cost. Replaced like on the server when a plugin provides one.
    get passwordHashing() {
      return (provided.get('passwordHashing') as PasswordHashing | undefined) ?? hashing;
    },
    // The core's stores behind the management services have no fake: that plugin is tested on a
    // built server (plugins/management/test). Any use throws; copying the services (a spread) does not.
    accountStore: noFake<Services['accountStore']>('accountStore'),
    appStore: noFake<Services['appStore']>('appStore'),
    // The server's keys have no fake either: a plugin that signs is tested on a built server.
    signJwt: () => Promise.reject(new Error('fakeServices has no signJwt: test against buildApp')),
    provided,
    deviceMap,
    bindings,
    accounts: {
      verified: async (user, medium) => verifiedAccounts.has(`${user.id}:${medium}`),
      markVerified: async (userId, medium) => void verifiedAccounts.add(`${userId}:${medium}`),
    },
    verifiedAccounts,
    devices: {
      startBinding: async (user, opts) => {
        bindings.push({ userId: user.id, biometric: opts.biometric });
        const code = cryptoHelpers.randomToken(32);
        return {
          binding_code: code,
          binding_url: `https://fake.test/devices/bind?code=${code}`,
          biometric_required: opts.biometric,
        };
      },
      ofUser: async (userId, opts) => (deviceMap.get(userId) ?? []).filter((d) => !opts?.biometric || d.biometric),
    },
    resolve: <T>(name: string): T => {
      if (!provided.has(name)) throw new Error(`no service "${name}" is provided`);
      return provided.get(name) as T;
    },
  };
}

export interface Registered {
  api: PluginApi;
  methods: AuthMethod[];
  grants: GrantHandler[];
  fdsRules: FdsRule[];
  channels: DeliveryChannel[];
  routes: RouteContribution[];
  records: MemoryRecords;
  /** `api.dependency` checks by name: call one to see what an operator would. */
  dependencies: Map<string, DependencyCheck>;
  /** `api.discovery` members, by name. */
  metadata: Map<string, unknown>;
  /** `api.messages` catalogs. */
  catalogs: PluginCatalogs;
  /** `api.tokenBinding`, if the plugin made one. */
  tokenBinding: TokenBinding | null;
  /** `api.clientAuthentication` methods, by method (since plugin API 1.3). */
  clientAuthentications: Map<string, ClientAuthentication>;
  /** `api.authorizationRequests`: the request_uri resolver, if the plugin registered one. */
  requestResolver: AuthorizationRequestResolver | null;
  /** `api.requestObjects`: the request object verifier, if the plugin registered one. */
  requestObjectVerifier: RequestObjectVerifier | null;
  /** `api.app` apps, by client id (since plugin API 1.3). */
  apps: Map<string, Record<string, unknown>>;
  /** `api.cors` path prefixes. */
  cors: string[];
  /** `api.prompt` handlers, by prompt value (since plugin API 1.3). */
  prompts: Map<string, PromptHandler>;
  /** `api.clientPolicy` policies, by name (since plugin API 1.3, decision 80). */
  clientPolicies: Map<string, ClientPolicy>;
  /** `api.securityEvents` listeners (since plugin API 1.3): call one with a `SecurityEvent`. */
  securityEvents: SecurityEventListener[];
  /** What the plugin serves besides the public port (`api.serve`): call one with a `ServingInfo`. */
  serving: ((serving: ServingInfo) => Promise<Served | void>)[];
  /** `api.sessionEnded` listeners (since plugin API 1.3): call one with an `EndedSession`. */
  sessionEnded: SessionEndListener[];
  /** `api.job` kinds, by kind, and the jobs queued with what it returned (run one with `jobs.get(kind).run`). */
  jobs: Map<string, BackgroundJob>;
  queuedJobs: { kind: string; payload: JsonObject; expiresAt: Date }[];
}

/** The issuer `api.web` names under `registerWithFakes`. */
export const FAKE_ISSUER = 'https://gatehouse.test';

/**
 * `api.web` for a registration without a server: the issuer and URLs are real; what needs a
 * request and the server's state (clients, sessions, logins, pages) says so when called.
 */
function webWithoutServer(): WebApi {
  const needsServer = (what: string) => () => {
    throw new Error(`api.web.${what} needs a running server: test the route with buildApp (docs/plugins.md)`);
  };
  return {
    issuer: FAKE_ISSUER,
    // FAKE_ISSUER has no path.
    base: '',
    url: (path) => `${FAKE_ISSUER}${path.startsWith('/') ? path : `/${path}`}`,
    authenticateClient: needsServer('authenticateClient'),
    fromTrustedProxy: needsServer('fromTrustedProxy'),
    session: needsServer('session'),
    endSession: needsServer('endSession'),
    client: needsServer('client'),
    logout: { session: needsServer('logout.session'), idTokenHint: needsServer('logout.idTokenHint') },
    // A limit is made in `register`; only counting needs the server.
    limit: (name) => ({ hit: needsServer(`limit('${name}').hit`) }),
    validateAuthorizationRequest: needsServer('validateAuthorizationRequest'),
    authorizationParameters: needsServer('authorizationParameters'),
    clientKeys: needsServer('clientKeys'),
    proofOfPossession: needsServer('proofOfPossession'),
    protectedResource: needsServer('protectedResource'),
    // No token binding without a server: a bearer resource's errors.
    protectedResourceErrors: () => ['invalid_token', 'insufficient_scope'],
    userClaims: needsServer('userClaims'),
    clientIp: needsServer('clientIp'),
    login: { start: needsServer('login.start'), result: needsServer('login.result') },
    messages: needsServer('messages'),
    headers: needsServer('headers'),
    page: needsServer('page'),
    // No config without a server: the unbranded look.
    brand: () => NO_BRAND,
    csrf: { token: needsServer('csrf.token'), valid: needsServer('csrf.valid') },
    loginFlows: needsServerAll<WebApi['loginFlows']>('loginFlows', needsServer),
    setup: needsServerAll<WebApi['setup']>('setup', needsServer),
    devices: needsServerAll<WebApi['devices']>('devices', needsServer),
    verification: needsServerAll<WebApi['verification']>('verification', needsServer),
    authorize: {
      consent: needsServerAll<WebApi['authorize']['consent']>('authorize.consent', needsServer),
      account: needsServerAll<WebApi['authorize']['account']>('authorize.account', needsServer),
    },
    requestFacts: needsServer('requestFacts'),
    requireAdmin: needsServer('requireAdmin'),
    adminTokenSet: false,
    routeSpecs: needsServer('routeSpecs'),
    methods: needsServer('methods'),
  };
}

/** An object each of whose calls says it needs a server (`api.web.loginFlows.get`, …). */
function needsServerAll<T extends object>(prefix: string, needsServer: (what: string) => () => never): T {
  return new Proxy({} as T, { get: (_target, name) => needsServer(`${prefix}.${String(name)}`) });
}

/** Runs a plugin's register against fakes and returns what it added. */
export async function registerWithFakes<O>(
  plugin: GatehousePlugin<O>,
  rawOptions: unknown = {},
  services: FakeServices = fakeServices(),
): Promise<Registered> {
  const out: Omit<Registered, 'api'> = {
    methods: [],
    grants: [],
    fdsRules: [],
    channels: [],
    routes: [],
    records: new MemoryRecords(services.clock),
    dependencies: new Map(),
    metadata: new Map(),
    catalogs: { en: {} },
    tokenBinding: null,
    clientAuthentications: new Map(),
    requestResolver: null,
    requestObjectVerifier: null,
    apps: new Map(),
    cors: [],
    prompts: new Map(),
    clientPolicies: new Map(),
    securityEvents: [],
    serving: [],
    sessionEnded: [],
    jobs: new Map(),
    queuedJobs: [],
  };
  // The same contract the server checks at start-up: a missing function fails here too.
  const point = <T>(list: T[], kind: string, problemsOf: (item: Record<string, unknown>) => string[]) => ({
    add(item: T) {
      const problems = problemsOf(item as Record<string, unknown>);
      if (problems.length) throw new Error(`${kind} ${problems.join(', ')}`);
      list.push(item);
    },
  });
  const checks: (() => void | Promise<void>)[] = [];
  const api: PluginApi = {
    plugin: { name: plugin.name, version: '0.0.0-test' },
    logger: silentLogger,
    methods: point(out.methods, 'method', methodProblems),
    grants: point(out.grants, 'grant', grantProblems),
    fdsRules: point(out.fdsRules, 'FDS rule', fdsRuleProblems),
    channels: point(out.channels, 'delivery channel', channelProblems),
    routes: point(out.routes, 'route', routeProblems),
    services,
    records: out.records,
    check: (run) => void checks.push(run),
    provide: (name, service) => {
      if (!plugin.provides?.includes(name)) throw new Error(`provides service "${name}" without naming it in provides`);
      const problems = REPLACEABLE_SERVICES[name]?.((service ?? {}) as Record<string, unknown>) ?? [];
      if (problems.length) throw new Error(`service "${name}" ${problems.join(', ')}`);
      services.provided.set(name, service);
    },
    dependency: (name, check) => {
      if (out.dependencies.has(name)) throw new Error(`dependency "${name}" is already checked`);
      out.dependencies.set(name, check);
    },
    web: webWithoutServer(),
    cors: (prefixes) => {
      for (const prefix of prefixes) {
        if (!prefix.startsWith('/')) throw new Error(`CORS prefix "${prefix}" must start with /`);
        if (out.cors.includes(prefix)) throw new Error(`CORS prefix "${prefix}" is added twice`);
        out.cors.push(prefix);
      }
    },
    discovery: (members) => {
      for (const [name, value] of Object.entries(members)) {
        if (out.metadata.has(name)) throw new Error(`discovery member "${name}" is added twice`);
        out.metadata.set(name, value);
      }
    },
    messages: (catalogs) => {
      if (!catalogs.en) throw new Error('messages need an "en" catalog');
      out.catalogs = catalogs;
    },
    tokenBinding: (binding) => {
      const problems = tokenBindingProblems(binding as unknown as Record<string, unknown>);
      if (problems.length || out.tokenBinding) throw new Error(`token binding ${problems.join(', ') || 'added twice'}`);
      out.tokenBinding = binding;
    },
    clientAuthentication: (method) => {
      const problems = clientAuthenticationProblems(method as unknown as Record<string, unknown>);
      if (problems.length || out.clientAuthentications.has(method.method))
        throw new Error(`client authentication method ${problems.join(', ') || 'added twice'}`);
      out.clientAuthentications.set(method.method, method);
    },
    authorizationRequests: (resolver) => {
      const problems = requestResolverProblems(resolver as unknown as Record<string, unknown>);
      if (problems.length) throw new Error(`authorization request resolver ${problems.join(', ')}`);
      if (out.requestResolver) throw new Error('an authorization request resolver is already registered');
      out.requestResolver = resolver;
    },
    requestObjects: (verifier) => {
      const problems = requestObjectVerifierProblems(verifier as unknown as Record<string, unknown>);
      if (problems.length) throw new Error(`request object verifier ${problems.join(', ')}`);
      if (out.requestObjectVerifier) throw new Error('a request object verifier is already registered');
      out.requestObjectVerifier = verifier;
    },
    prompt: (handler) => {
      const problems = promptHandlerProblems(handler as unknown as Record<string, unknown>);
      if (problems.length) throw new Error(`prompt handler ${problems.join(', ')}`);
      if (out.prompts.has(handler.prompt)) throw new Error(`prompt "${handler.prompt}" is already handled`);
      out.prompts.set(handler.prompt, handler);
    },
    clientPolicy: (policy) => {
      const problems = clientPolicyProblems(policy as unknown as Record<string, unknown>);
      if (problems.length) throw new Error(`client policy ${problems.join(', ')}`);
      if (out.clientPolicies.has(policy.name)) throw new Error(`client policy "${policy.name}" is already registered`);
      out.clientPolicies.set(policy.name, policy);
    },
    app: (app) => {
      if (out.apps.has(app.client_id)) throw new Error(`app "${app.client_id}" is added twice`);
      out.apps.set(app.client_id, app);
    },
    securityEvents: (listener) => void out.securityEvents.push(listener),
    serve: (start) => void out.serving.push(start),
    sessionEnded: (listener) => void out.sessionEnded.push(listener),
    job: (job) => {
      if (out.jobs.has(job.kind)) throw new Error(`background job "${job.kind}" is added twice`);
      out.jobs.set(job.kind, job);
      return async (payload, expiresAt) => void out.queuedJobs.push({ kind: job.kind, payload, expiresAt });
    },
  };
  const options = plugin.options ? plugin.options.parse(rawOptions) : (rawOptions as O);
  await plugin.register(api, options);
  // Checks see the fakes' channels plus the ones this plugin added, as the server would.
  for (const channel of out.channels)
    if (!services.channelMap.has(channel.id)) services.channelMap.set(channel.id, channel);
  for (const check of checks) await check();
  return { api, ...out };
}

interface ContextInput {
  services: FakeServices;
  user: UserRecord;
  method: string;
  request?: Partial<RequestFacts>;
  clientId?: string;
  /** The app's per-app options for the method, as the server passes them after parsing. */
  appOptions?: unknown;
}

function base(input: ContextInput) {
  return {
    user: input.user,
    credentials: input.services.credentials(input.user.id, input.method),
    request: fakeRequest(input.request),
    clientId: input.clientId ?? 'test-client',
    logger: silentLogger,
    ...(input.appOptions !== undefined ? { appOptions: input.appOptions } : {}),
  };
}

export function initiateContext(
  input: ContextInput & { mediumId?: string | null; ttlSeconds?: number },
): InitiateContext {
  const now = input.services.clock.now();
  return {
    ...base(input),
    mediumId: input.mediumId ?? null,
    exchangeExpiresAt: new Date(now.getTime() + (input.ttlSeconds ?? 600) * 1000),
  };
}

export function verifyContext(
  input: ContextInput & { fields: Record<string, string>; state?: JsonObject; files?: VerifyContext['files'] },
): VerifyContext {
  return { ...base(input), fields: input.fields, state: input.state ?? {}, files: input.files ?? [] };
}

export function enrollmentContext(
  input: ContextInput & { body?: Record<string, unknown>; pending?: JsonObject | null },
): EnrollmentContext {
  return { ...base(input), body: input.body ?? {}, pending: input.pending ?? null };
}

/**
 * Since 1.3: the context of `enrollment.import` (`gatehouse users import`): the user the row is
 * for, not stored yet (no id).
 */
export function importContext(user: Partial<ImportContext['user']> = {}): ImportContext {
  return {
    user: { username: user.username ?? 'imported', email: user.email ?? null, phone: user.phone ?? null },
    logger: silentLogger,
  };
}

export function fdsContext(
  input: Omit<ContextInput, 'services' | 'appOptions'> & { services: FakeServices; phase?: FdsContext['phase'] },
): FdsContext {
  return {
    phase: input.phase ?? 'verification',
    user: input.user,
    method: input.method,
    clientId: input.clientId ?? 'test-client',
    request: fakeRequest(input.request),
    now: input.services.clock.now(),
    history: input.services.history,
    logger: silentLogger,
  };
}
export * from './oauth.js';
export { countStatements } from './statements.js';
