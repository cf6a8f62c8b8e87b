/**
 * What each kind of extension must have, checked when a plugin adds one: a method without
 * `verify` would boot and then fail every request that reaches it. Returns the problems found.
 * The core runs them at start-up, the testing kit's fakes run the same (decision 58).
 */
import { existsSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { CONFIRMATION_MEMBERS, PLUGGABLE_AUTH_METHODS } from './oauth.js';
import { OAUTH_ERROR_STATUS } from './oauth-errors.js';

type Shape = Record<string, unknown>;

const fn = (item: Shape, key: string) => (typeof item[key] === 'function' ? [] : [`has no ${key} function`]);
const strings = (item: Shape, key: string) =>
  Array.isArray(item[key]) && (item[key] as unknown[]).every((v) => typeof v === 'string')
    ? []
    : [`has no ${key} list of strings`];

/** Upper case, as the method is a path segment and a config value (`login_stages`). */
export const METHOD_ID = /^[A-Z][A-Z0-9_]*$/;

/** What is wrong with a method a plugin adds (`api.methods.add`); empty when nothing is. */
export function methodProblems(m: Shape): string[] {
  const problems = [
    ...(typeof m.id === 'string' && METHOD_ID.test(m.id) ? [] : ['has an id that is not upper case (such as TOTP)']),
    ...strings(m, 'amr'),
    ...strings(m, 'verifyFields'),
    ...fn(m, 'isEnrolled'),
    ...fn(m, 'initiate'),
    ...fn(m, 'verify'),
  ];
  if (m.files !== undefined && !Array.isArray(m.files)) problems.push('has files that are not a list');
  if (m.errors !== undefined && !errorTable(m.errors))
    problems.push('has errors that are not { CODE: [status, meaning] }');
  if (m.page !== undefined) problems.push(...pageProblems(m.page as Shape, (m.verifyFields as string[]) ?? []));
  const enrollment = m.enrollment as Shape | undefined;
  if (enrollment !== undefined) {
    if (!enrollment || typeof enrollment !== 'object') problems.push('has an enrollment that is not an object');
    else {
      problems.push(...fn(enrollment, 'initiate').map((p) => `enrollment ${p}`));
      for (const step of ['scan', 'verify'])
        if (enrollment[step] !== undefined) problems.push(...fn(enrollment, step).map((p) => `enrollment ${p}`));
    }
  }
  return problems;
}

function pageProblems(page: Shape, verifyFields: string[]): string[] {
  if (!page || typeof page !== 'object') return ['has a page that is not an object'];
  const problems: string[] = [];
  if (typeof page.label !== 'string' || !page.label) problems.push('has a page without a label');
  if (page.inputs !== undefined) {
    if (!Array.isArray(page.inputs)) problems.push('has page.inputs that are not a list');
    else
      for (const input of page.inputs as Shape[]) {
        if (!verifyFields.includes(input?.field as string))
          problems.push(`has a page input for "${String(input?.field)}", which is not one of its verifyFields`);
        if (typeof input?.label !== 'string' || !input.label)
          problems.push(`has a page input "${String(input?.field)}" without a label`);
      }
  }
  for (const file of [page.module, ...Object.values((page.moduleFiles as Record<string, unknown>) ?? {})]) {
    if (file === undefined) continue;
    if (typeof file !== 'string' || !isAbsolute(file) || !existsSync(file))
      problems.push(`has a page module file that does not exist: ${String(file)}`);
  }
  return problems;
}

/** `{ CODE: [status, meaning] }`: codes a method's outcomes carry, for /openapi.json. */
function errorTable(value: unknown): boolean {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  return Object.values(value).every(
    (v) => Array.isArray(v) && v.length === 2 && Number.isInteger(v[0]) && typeof v[1] === 'string',
  );
}

/** What is wrong with a grant handler (`api.grants.add`). */
export function grantProblems(g: Shape): string[] {
  const errors = Array.isArray(g.errors) ? (g.errors as unknown[]) : [];
  // A code by name must be one the catalogue knows (else it documents nothing); others bring their status.
  const unknown = errors.filter((e) => typeof e === 'string' && !Object.hasOwn(OAUTH_ERROR_STATUS, e));
  return [
    ...strings(g, 'parameters'),
    ...fn(g, 'handle'),
    ...(g.errors !== undefined && !Array.isArray(g.errors) ? ['errors is not a list'] : []),
    ...unknown.map((code) => `names error "${String(code)}", which is in no catalogue: give its status`),
  ];
}

/** What is wrong with an FDS rule (`api.fdsRules.add`). */
export function fdsRuleProblems(r: Shape): string[] {
  return fn(r, 'evaluate');
}

/** What is wrong with a delivery channel (`api.channels.add`). */
export function channelProblems(c: Shape): string[] {
  const kinds = c.kinds as unknown[];
  return [...(Array.isArray(kinds) && kinds.length ? strings(c, 'kinds') : ['has no kinds']), ...fn(c, 'send')];
}

/** What is wrong with a token binding (`api.tokenBinding`). */
export function tokenBindingProblems(b: Shape): string[] {
  const member = b.confirmation === undefined || (CONFIRMATION_MEMBERS as readonly unknown[]).includes(b.confirmation);
  return [
    ...(member ? [] : [`has a confirmation that is not one of ${CONFIRMATION_MEMBERS.join(', ')}`]),
    ...strings(b, 'algorithms'),
    ...fn(b, 'tokenRequest'),
    ...fn(b, 'resourceRequest'),
  ];
}

/** What is wrong with a client policy (`api.clientPolicy`, since 1.3): a name, `appliesTo`, hooks that are functions. */
export function clientPolicyProblems(p: Shape): string[] {
  const hooks = ['appIssues', 'authorizationRequest', 'authorizationParameters', 'clientAssertion', 'tokenRequest'];
  return [
    ...(typeof p.name === 'string' && /^[a-z0-9][a-z0-9._-]*$/.test(p.name) ? [] : ['has no name such as fapi2']),
    ...fn(p, 'appliesTo'),
    ...hooks.filter((hook) => p[hook] !== undefined).flatMap((hook) => fn(p, hook)),
    ...(p.assertionAlgorithms === undefined ? [] : strings(p, 'assertionAlgorithms')),
  ];
}

/** What is wrong with a client authentication method (`api.clientAuthentication`). */
export function clientAuthenticationProblems(m: Shape): string[] {
  const known = (PLUGGABLE_AUTH_METHODS as readonly unknown[]).includes(m.method);
  return [
    ...(known ? [] : [`has a method that is not one of ${PLUGGABLE_AUTH_METHODS.join(', ')}`]),
    ...fn(m, 'authenticate'),
  ];
}

/** What is wrong with a route contribution (`api.routes.add`). */
export function routeProblems(r: Shape): string[] {
  return [
    ...(typeof r.path === 'string' && r.path.startsWith('/') ? [] : ['has a path that does not start with /']),
    // A mount path is a path: a query or fragment part would never match, and could pose as another key.
    ...(typeof r.path === 'string' && /[?#\s]/.test(r.path)
      ? ['has a path that is not a plain path (no ?, # or spaces)']
      : []),
    ...fn(r, 'router'),
    ...(r.operations === undefined || Array.isArray(r.operations) || typeof r.operations === 'function'
      ? []
      : ['has operations that are not a list']),
  ];
}

/** What is wrong with an authorization request resolver (`api.authorizationRequests`). */
export function requestResolverProblems(r: Shape): string[] {
  return [
    ...fn(r, 'resolve'),
    ...(r.required === undefined || typeof r.required === 'function' ? [] : ['has a required that is not a function']),
  ];
}

/** What is wrong with a request object verifier (`api.requestObjects`). */
export function requestObjectVerifierProblems(v: Shape): string[] {
  return [
    ...strings(v, 'algorithms'),
    ...fn(v, 'verify'),
    ...(v.required === undefined || typeof v.required === 'function' ? [] : ['has a required that is not a function']),
  ];
}

/** What a prompt handler (`api.prompt`, since 1.3) must have. */
export function promptHandlerProblems(h: Shape): string[] {
  return [
    ...(h.prompt === 'create' ? [] : ['has a prompt other than "create"']),
    ...fn(h, 'enabled'),
    ...(typeof h.path === 'string' && /^\/[A-Za-z0-9/_-]*$/.test(h.path) ? [] : ['has no path such as /register']),
  ];
}

/** The core services a plugin may replace or provide (`provides`), with what one must have. */
export const REPLACEABLE_SERVICES: Readonly<Record<string, (service: Shape) => string[]>> = Object.freeze({
  passwordHashing: (s) => fn(s, 'withCost'),
  userDirectory: (s) => [...fn(s, 'findById'), ...fn(s, 'findByIdentifier')],
  tracing: (s) => [
    ...(typeof s.enabled === 'boolean' ? [] : ['has no enabled flag']),
    ...['span', 'request', 'inTrace', 'flush', 'shutdown'].flatMap((name) => fn(s, name)),
  ],
  // Since 1.3 (decision 65): the pages' brands.
  branding: (s) => fn(s, 'of'),
  metrics: (s) => [
    ...(typeof s.enabled === 'boolean' ? [] : ['has no enabled flag']),
    ...['httpRequest', 'tokenIssued', 'tokenRefused', 'verification', 'fdsVerdict', 'delivery'].flatMap((name) =>
      fn(s, name),
    ),
  ],
  // Since 1.3 (decision 72): where the limits that hold across nodes count.
  sharedCounters: (s) => [...fn(s, 'hit'), ...fn(s, 'close')],
  // Since 1.3 (decision 77): the token endpoint's JWT signatures.
  jwtSigning: (s) => fn(s, 'sign'),
  // Since 1.3 (decisions 74, 87): what carries the peer news between nodes; the core's reaches this one only.
  peerBus: (s) => [...fn(s, 'open'), ...fn(s, 'publish'), ...fn(s, 'close')],
});

/** One or two words (`backup`, `users import`): what follows `gatehouse` on the command line. */
export const COMMAND_NAME = /^[a-z][a-z0-9-]*( [a-z][a-z0-9-]*)?$/;

/** What is wrong with a CLI command of a plugin (`GatehousePlugin.commands`); empty when nothing is. */
export function commandProblems(c: Shape): string[] {
  return [
    ...(typeof c.name === 'string' && COMMAND_NAME.test(c.name)
      ? []
      : ['has a name that is not one or two lowercase words']),
    ...(typeof c.description === 'string' ? [] : ['has no description']),
    ...fn(c, 'run'),
    ...(c.positionals === undefined || Array.isArray(c.positionals) ? [] : ['has positionals that are not a list']),
  ];
}
