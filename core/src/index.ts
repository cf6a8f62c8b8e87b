/**
 * @gatehouse-auth/core — the public API. Plugins import only from here (never a deep path).
 */
export { z } from 'zod';
// The plugin contract (decision 58): its own package, all of it re-exported here, so plugins
// keep importing from '@gatehouse-auth/core' alone.
// The contract (decision 58): all of its types, and by name the values plugins use; the helpers the
// core shares with it (`trusted`, `escapeHtml`, `negotiate`, ...) stay out of the public API.
export type * from '@gatehouse-auth/plugin-api';
export {
  ACCESS_TOKEN_TYPE,
  CONFIRMATION_MEMBERS,
  DEVICE_API_PATHS,
  DEVICE_FIELDS,
  DEVICE_PAGE_MODULE,
  ID_TOKEN_TYPE,
  JWT_TOKEN_TYPE,
  MethodModules,
  NO_BRAND,
  PLUGGABLE_AUTH_METHODS,
  PLUGIN_API_VERSION,
  PUSH_STEP_NAMES,
  REFRESH_TOKEN_TYPE,
  addCodeMethod,
  addDeviceMethod,
  answerContinuation,
  answerSuccess,
  boundKey,
  boundToAnother,
  codeMethodOptions,
  confirmationOf,
  createCodeMethod,
  definePlugin,
  defineRoute,
  deviceBindingEnrollment,
  deviceMethod,
  deviceMethodOptions,
  html,
  maskEmail,
  maskPhone,
  normalizeEmail,
  normalizePhone,
  pageContext,
  pickLocale,
  textFields,
  unprovenBinding,
} from '@gatehouse-auth/plugin-api';
// Since 1.3: the login flows and the setup API for plugin routes (decision 40).
export { verificationError, CONTINUE_ROUTE, VERIFICATION_ROUTE_PARTS } from '@gatehouse-auth/plugin-api';
// Since 1.3: the hosted pages' skeleton and error page, for a plugin that renders its own pages
// (the contract's since decision 85).
export { layout as pageLayout, passwordReveal, renderErrorPage, renderNoticePage } from '@gatehouse-auth/plugin-api';
// Since 1.3 (decision 85): a page's static files, read with a content hash and served as the core's are.
export { readAsset, sendAsset } from '@gatehouse-auth/plugin-api';
export { readCookie } from './http/cookies.js';
// Since 1.3: what the admin REST API plugin documents and validates with (decision 44).
export { ADMIN_THROTTLED } from '@gatehouse-auth/plugin-api';
export { profilePatchSchema } from './users/profile.js';
// Since 1.3: the device API's bodies, which `web.devices` checks, for its plugin's declarations (decision 69).
export { DEVICE_BODIES } from './devices/bodies.js';
export { REQUIRED_ACTIONS, REQUIRED_ACTIONS_PATH } from './users/required-actions.js';
export { E164 as E164_PATTERN, EMAIL as EMAIL_PATTERN, USERNAME as USERNAME_PATTERN } from './users/users.js';
export type { Metrics } from './observability/metrics.js';
export type { Tracing } from './observability/tracing.js';
export { CORE_VERSION } from './version.js';
export { argon2Hashing } from './hashing.js';
export { BootError, isBootError, methodRefusalError } from './errors.js';
export { ApiError, ProtocolError, isProtocolError, OAuthError } from '@gatehouse-auth/plugin-api';
export { routeInput, envelopeOf } from '@gatehouse-auth/plugin-api';
// Since 1.3: what an API description (@gatehouse-auth/openapi) reads of the declarations.
export { operationErrors, openApiPaths } from '@gatehouse-auth/plugin-api';
export { CLIENT_FIELDS as CLIENT_AUTH_FIELDS, CLIENT_ERRORS as CLIENT_AUTH_ERRORS } from './oauth/api.js';
export { ActiveTokenCache, type Invalidation } from './oauth/token-cache.js';

// For embedding and tests: compose a server in-process.
export { buildApp } from './gatehouse.js';
export type { Gatehouse, BuildOptions } from './gatehouse.js';
export { listen } from './server.js';
export type { RunningServer } from './server.js';
export { loadConfigFile, parseConfig, resolveConfigFile } from './config/load.js';
export { absoluteUrl, type GatehouseConfig, type AppConfig } from './config/schema.js';
export { createLogger } from './http/logging.js';

// For the `gatehouse` command, a front-end on this API (@gatehouse-auth/cli, decision 73): the
// operator's operations outside of a request, the plugins as the config names them (imported and
// checked, not registered: whose commands there are), and what a plugin's command sees.
export { checkConfig } from './gatehouse.js';
export type { LoadedConfig } from './config/load.js';
export { resolvePlugins } from './plugins/loader.js';
export { cliServer, migrateDatabase, publishedSigningKeys, rotateSigningKeys } from './operator.js';
// Since decision 82 the command serves too (one process, or forked workers): the core's share of
// the cluster primary, and what marks a forked worker.
export { startPrimary } from './cluster.js';
export { CLUSTER_WORKER_ENV } from './observability/metrics.js';
export type { StartedTogether } from './plugins/serve.js';

// For @gatehouse-auth/testing, whose fakes must behave as the server does (decision 35, step 2):
// the contract checks the server runs on what a plugin adds at start-up, the crypto and HTTP
// helpers it hands plugins as `services.crypto` and `services.http`, the scope rule of
// `OAuthServices.resolveScope` and the access token lifetime of `issue`, the secret box behind
// `services.secrets`, how a queued message is sent and how a new event is stored. The same code,
// not copies: a fake that drifted from the server would pass tests the server fails.
export {
  channelProblems,
  fdsRuleProblems,
  grantProblems,
  methodProblems,
  promptHandlerProblems,
  requestResolverProblems,
  requestObjectVerifierProblems,
  routeProblems,
  tokenBindingProblems,
  clientAuthenticationProblems,
  clientPolicyProblems,
  REPLACEABLE_SERVICES,
} from '@gatehouse-auth/plugin-api';
export { cryptoHelpers, httpHelpers } from './services.js';
export { resolveScope } from './oauth/services.js';
export { accessTokenLifetime } from './oauth/tokens.js';
export { SecretBox } from './util/crypto.js';
export { sendQueued, type QueuedDelivery } from './jobs/delivery.js';
export { storedEvent } from './verification/user-history.js';
