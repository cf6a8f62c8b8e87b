import type { AuthMethod, MethodContext, RequestFacts, UploadedFile, UserRecord } from '@gatehouse-auth/plugin-api';
import type { Logger } from 'pino';
import { appMethods, type AppConfig } from '../config/schema.js';
import { verificationError, verificationErrorWithStatus } from './errors.js';
import type { Exchange } from './exchanges.js';
import type { LoginFlow } from './flows.js';
import { PHANTOM_USER_ID, phantomUser } from './context.js';

/** Fields the spec assigns to some method; seeing one that the method does not take is FIELDS_MIXED. */
export const SPEC_METHOD_FIELDS = [
  'pass_code',
  'password',
  'push_id',
  'device_id',
  'client_id',
  'photo',
  'fido2_client_response',
] as const;

/** A verification request, as its route read it. */
export interface VerifyInput {
  fields: Record<string, string>;
  malformed: string[];
  /** Every key of the request body, whatever its value. */
  keys: string[];
  files: UploadedFile[];
  request: RequestFacts;
  logger: Logger;
  /** For device methods: the Device-Proof header and the public path it must name. */
  device?: { proof: string | undefined; path: string };
}

/** The state one verification request carries through the steps. */
export interface VerifyState extends VerifyInput {
  method: AuthMethod;
  /** Filled in by the steps: */
  exchange?: Exchange;
  flow?: LoginFlow;
  app?: AppConfig;
  user?: UserRecord;
  phantom?: boolean;
  /** The proof is to complete the whole login (`single_factor_auth`, allowed for this app). */
  singleFactor?: boolean;
  /** A discoverable first stage: the user the proof names (DiscoverableMethod.identify). */
  discovered?: string;
  /** The method's context for the user, made once per request (its credential reads are shared). */
  methodContext?: MethodContext;
}

/** Where an exchange records that a discoverable method started it without a user. */
export const DISCOVERABLE_KEY = '_discoverable';
/** Where an exchange keeps a single-factor request made at initiation (see singleFactorRequested). */
export const SINGLE_FACTOR_KEY = '_single_factor';

/** What the steps need from the server, so each one stays a small pure-ish function. */
export interface StepDeps {
  findExchange(id: string): Promise<Exchange | null>;
  findFlow(id: string): Promise<LoginFlow | null>;
  findApp(clientId: string): AppConfig | undefined;
  findUser(id: string): Promise<UserRecord | null>;
  /** Whom a discoverable method's proof names. */
  identify(state: VerifyState): Promise<string | null>;
  methodContext(state: VerifyState, user: UserRecord): MethodContext;
  /** Field names of every registered method, for FIELDS_MIXED. */
  knownFields(): Set<string>;
  now(): Date;
}

export type Step = (s: VerifyState, deps: StepDeps) => Promise<void> | void;

// (a) the exchange: present, known, of this method, unused, unexpired, of the current stage.

export const exchangePresent: Step = (s) => {
  if (!s.fields.exchange_id) throw verificationError('EXCHANGE_INVALID', 'exchange_id is required');
};

export const exchangeKnown: Step = async (s, deps) => {
  const exchange = await deps.findExchange(s.fields.exchange_id!);
  if (!exchange) throw verificationErrorWithStatus('EXCHANGE_INVALID', 404, 'no such exchange_id');
  if (exchange.method !== s.method.id) {
    throw verificationError('EXCHANGE_INVALID', `the exchange_id was issued for another method`);
  }
  s.exchange = exchange;
};

export const exchangeUnused: Step = (s) => {
  const ex = s.exchange!;
  if (ex.usedAt) throw verificationError('EXCHANGE_USED');
  if (ex.revokedReason === 'attempts') throw verificationError('TOO_MANY_ATTEMPTS');
  if (ex.revokedAt)
    throw verificationError('EXCHANGE_INVALID', `the exchange_id is no longer valid (${ex.revokedReason})`);
};

export const exchangeUnexpired: Step = async (s, deps) => {
  const now = deps.now();
  if (s.exchange!.expiresAt <= now) throw verificationError('EXCHANGE_EXPIRED');
  const flow = await deps.findFlow(s.exchange!.flowId);
  if (!flow || flow.expiresAt <= now) throw verificationError('EXCHANGE_EXPIRED', 'the login request has expired');
  s.flow = flow;
};

export const exchangeOfCurrentStage: Step = (s) => {
  if (s.flow!.status !== 'active' || s.flow!.stage !== s.exchange!.stage) throw verificationError('WRONG_FLOW_STAGE');
};

// (b) single_factor_auth only where the method allows it.

export const singleFactorOnlyWhereAllowed: Step = (s, deps) => {
  if (!s.keys.includes('single_factor_auth')) return;
  if (singleFactorRequested(s.method, s.fields.single_factor_auth, deps.findApp(s.flow!.clientId)))
    s.singleFactor = true;
};

/**
 * Whether a request that carries `single_factor_auth` (with `value`, undefined when it was not a
 * string) asks the method to complete the login alone. Throws unless it is a single-factor
 * method, the value is true or false, and (for true) the app allows the method alone. Also
 * checked at initiation: a device method's verification comes from the device, so the login
 * page asks for it when it starts the push.
 */
export function singleFactorRequested(
  method: AuthMethod,
  value: string | undefined,
  app: AppConfig | undefined,
): boolean {
  // Any value counts, null or malformed included: the flag itself is what only FACE accepts.
  if (!method.singleFactor) throw verificationError('SINGLE_FACTOR_NOT_ALLOWED');
  if (value !== 'true' && value !== 'false') {
    throw verificationError('INVALID_FIELD', 'single_factor_auth must be true or false', {
      fields: ['single_factor_auth'],
    });
  }
  if (value === 'false') return false;
  if (!app?.single_factor_methods.includes(method.id)) {
    throw verificationError('SINGLE_FACTOR_NOT_ALLOWED', `this app does not allow ${method.id} alone`);
  }
  return true;
}

// (c) fields, enablement, then the method's own check.

export const requiredFieldsPresent: Step = (s) => {
  const missing = s.method.verifyFields.filter((f) => !s.fields[f] && !s.malformed.includes(f));
  const missingFiles = (s.method.files ?? [])
    .filter((f) => !s.files.some((u) => u.fieldName === f.name))
    .map((f) => f.name);
  const all = [...missing, ...missingFiles];
  if (all.length) throw verificationError('FIELD_MISSING', `missing: ${all.join(', ')}`, { fields: all });
  if (s.malformed.length) {
    throw verificationError('INVALID_FIELD', `not a single text value: ${s.malformed.join(', ')}`, {
      fields: s.malformed,
    });
  }
};

export const noForeignFields: Step = (s, deps) => {
  const mine = new Set([...s.method.verifyFields, ...(s.method.files ?? []).map((f) => f.name)]);
  const present = [...Object.keys(s.fields), ...s.files.map((f) => f.fieldName)];
  const foreign = present.filter((f) => deps.knownFields().has(f) && !mine.has(f));
  if (foreign.length) {
    throw verificationError('FIELDS_MIXED', `fields of other methods: ${foreign.join(', ')}`, { fields: foreign });
  }
};

export const methodEnabled: Step = async (s, deps) => {
  const app = deps.findApp(s.flow!.clientId);
  if (!app || !appMethods(app).includes(s.method.id)) {
    throw verificationError('METHOD_NOT_ENABLED', `${s.method.id} is not enabled for this app`);
  }
  s.app = app;
  // A discoverable first stage names no user at initiation: the proof says whom it is for.
  if (!s.exchange!.userId && s.exchange!.state[DISCOVERABLE_KEY] === true && s.method.discoverable) {
    s.discovered = (await deps.identify(s)) ?? undefined;
  }
  const userId = s.exchange!.userId ?? s.discovered;
  // No user is looked up too (the phantom's id finds nobody): the same statement either way.
  const user = await deps.findUser(userId ?? PHANTOM_USER_ID);
  const firstStage = !s.flow!.userId;
  if (!user || (firstStage && user.status !== 'active')) {
    // First stage with an unknown (or meanwhile disabled) user: carry on so the answer
    // matches a wrong proof and reveals nothing about the account, and ask the method whether
    // it is set up, as for a real user, so the work is the same too (its answer is moot).
    s.phantom = true;
    await s.method.isEnrolled(deps.methodContext(s, phantomUser(s.flow!.id)));
    return;
  }
  if (user.status !== 'active') throw verificationError('USER_DISABLED');
  if (!(await s.method.isEnrolled(deps.methodContext(s, user)))) {
    throw verificationError('METHOD_NOT_ENABLED', `${s.method.id} is not set up for this user`);
  }
  s.user = user;
};

/** Step (a): the exchange is present, known, of this method, live and of the current stage. */
export const EXCHANGE_STEPS: readonly Step[] = [
  exchangePresent,
  exchangeKnown,
  exchangeUnused,
  exchangeUnexpired,
  exchangeOfCurrentStage,
];

/** The ordered steps (a)–(c) of the spec; (d) FDS and the commit follow in the service. */
export const VERIFY_STEPS: readonly Step[] = [
  ...EXCHANGE_STEPS,
  singleFactorOnlyWhereAllowed,
  requiredFieldsPresent,
  noForeignFields,
  methodEnabled,
];
