/**
 * The benchmark peer: node-oidc-provider v9 with its default in-memory adapter, configured like
 * bench/gatehouse-server.ts (same clients and secrets, ES256 JWT or opaque access tokens), in its
 * own process. Reports `{ type: 'ready', port, issuer }` over IPC. For the authorization-code
 * scenario it mints codes on request (`{ type: 'mint', … }` → `{ type: 'minted', codes }`)
 * through its own models, since its login needs a browser interaction: bench-only, over IPC,
 * never over HTTP.
 *
 * Two configurations (BENCH_PEER_CONFIG, `--peer` of bench/run.ts; both described by
 * PEER_CONFIGURATIONS in lib/peer-config.ts, which the table's notes print):
 * - `bench` (the default): its memory adapter on a store of 500,000 entries instead of the
 *   shipped 1,000, so that a run's codes, minted before it as Gatehouse's are, are not evicted
 *   before use; resource indicators, so that each client's tokens are JWT (ES256) or opaque.
 * - `default`: as its README's quick start runs it: the shipped memory adapter (1,000 entries),
 *   no resource indicators (so every access token is opaque), the default introspection policy;
 *   only what the scenarios need is added (the clients, client credentials, introspection, the
 *   scope, the ES256 key). e cannot run on it: its store evicts a run's pre-minted codes.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import MemoryAdapter from 'oidc-provider/lib/adapters/memory_adapter.js';
import LRU from 'oidc-provider/lib/helpers/lru.js';
import {
  API_SCOPE,
  CODE_CLIENT,
  JWT_CLIENT,
  JWT_RESOURCE,
  OPAQUE_CLIENT,
  OPAQUE_RESOURCE,
  REDIRECT_URI,
} from './lib/clients.js';
import { answerMint, type MintRequest } from './lib/mint-codes.js';
import { freePort } from './lib/ports.js';
import { recordServerLatency } from './lib/server-latency.js';

// tsx turns source maps on; a deployment runs plain JS without them, and with them every
// `new Error().stack` (Sequelize reads one per query) costs several times more.
process.setSourceMapsEnabled(false);

if (!process.send) {
  console.error('peer-server: start me from bench/run.ts (needs an IPC channel)');
  process.exit(2);
}

const mode = process.env.BENCH_PEER_CONFIG === 'default' ? 'default' : 'bench';
// `bench`: its own in-memory adapter, on a store of 500,000 entries instead of the default 1,000.
const store = new LRU({ maxSize: 500_000 });
const adapter = (model: string) => new MemoryAdapter(model, store);

const port = await freePort();
const issuer = `http://127.0.0.1:${port}`;
const { privateKey } = await generateKeyPair('ES256', { extractable: true });
const signingKey = { ...(await exportJWK(privateKey)), kid: 'bench-es256', alg: 'ES256', use: 'sig' };

const confidential = (client: { id: string; secret: string }) => ({
  client_id: client.id,
  client_secret: client.secret,
  token_endpoint_auth_method: 'client_secret_basic',
  id_token_signed_response_alg: 'ES256',
});

/** The bench's additions: the raised store, the introspection rule, resource indicators. */
const benchOnly = {
  adapter,
  pkce: { required: () => true },
  ttl: { AuthorizationCode: 600, AccessToken: 3600, ClientCredentials: 3600, IdToken: 3600, Grant: 86_400 },
};
const benchFeatures = {
  devInteractions: { enabled: false },
  introspection: {
    enabled: true,
    // Gatehouse's rule: a client sees the tokens issued to it.
    allowedPolicy: (_ctx: unknown, client: { clientId: string }, token: { clientId?: string }) =>
      token.clientId === client.clientId,
  },
  resourceIndicators: {
    enabled: true,
    // Each client's tokens go to the resource server of its format, without a `resource` parameter.
    defaultResource: (_ctx: unknown, client: { clientId: string }, oneOf?: string) =>
      oneOf ?? (client.clientId === OPAQUE_CLIENT.id ? OPAQUE_RESOURCE : JWT_RESOURCE),
    useGrantedResource: () => true,
    getResourceServerInfo: (_ctx: unknown, resource: string) =>
      resource === JWT_RESOURCE
        ? { scope: API_SCOPE, audience: resource, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } }
        : { scope: API_SCOPE, audience: resource, accessTokenFormat: 'opaque' },
  },
};

const provider = new Provider(issuer, {
  ...(mode === 'bench' ? benchOnly : {}),
  clients: [
    { ...confidential(JWT_CLIENT), grant_types: ['client_credentials'], response_types: [], redirect_uris: [] },
    { ...confidential(OPAQUE_CLIENT), grant_types: ['client_credentials'], response_types: [], redirect_uris: [] },
    {
      ...confidential(CODE_CLIENT),
      grant_types: ['authorization_code'],
      response_types: ['code'],
      redirect_uris: [REDIRECT_URI],
    },
  ],
  jwks: { keys: [signingKey] },
  scopes: ['openid', API_SCOPE],
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  findAccount: (_ctx: unknown, accountId: string) => ({ accountId, claims: async () => ({ sub: accountId }) }),
  features: {
    clientCredentials: { enabled: true },
    ...(mode === 'bench' ? benchFeatures : { introspection: { enabled: true } }),
  },
});
provider.on('server_error', (_ctx: unknown, err: unknown) => console.error('peer-server: server_error', err));
// The first failed grant says why (the response only says invalid_grant); the bench counts the rest.
let grantErrorShown = false;
provider.on('grant.error', (_ctx: unknown, err: unknown) => {
  if (grantErrorShown) return;
  grantErrorShown = true;
  const { message, error_detail } = err as { message?: string; error_detail?: string };
  console.error(`peer-server: first grant error: ${message}: ${error_detail}`);
});

const server = http.createServer(provider.callback());
// --server-latency only (BENCH_SERVER_LATENCY=1): measured as Gatehouse is (lib/server-latency.ts).
recordServerLatency(server);
await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));

/** A code as the authorization endpoint would leave it: a grant with the scopes, then the code. */
async function mintOne(request: MintRequest): Promise<string> {
  const client = await provider.Client.find(CODE_CLIENT.id);
  if (!client) throw new Error(`peer-server: client ${CODE_CLIENT.id} is not registered`);
  const grant = new provider.Grant({ accountId: request.subject, clientId: CODE_CLIENT.id });
  grant.addOIDCScope('openid');
  grant.addResourceScope(JWT_RESOURCE, API_SCOPE);
  const grantId = await grant.save();
  const code = new provider.AuthorizationCode({
    accountId: request.subject,
    client,
    grantId,
    redirectUri: REDIRECT_URI,
    scope: `openid ${API_SCOPE}`,
    resource: JWT_RESOURCE,
    codeChallenge: request.codeChallenge,
    codeChallengeMethod: 'S256',
    authTime: Math.floor(Date.now() / 1000),
    amr: ['pwd'],
  });
  return code.save();
}

process.on('message', (message: { type?: string } & Partial<MintRequest>) => {
  if (message?.type === 'mint') {
    const request = message as MintRequest;
    void answerMint(request.count, () => mintOne(request));
  } else if (message?.type === 'stop') {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
process.on('disconnect', () => process.exit(0));
process.send({ type: 'ready', port, issuer, mode });
