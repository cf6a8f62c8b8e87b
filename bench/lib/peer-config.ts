/**
 * The peer's two configurations (bench/peer-server.ts, `--peer` of bench/run.ts), as the table's
 * notes print them: a ratio means little without what the peer was asked to do.
 */
export type PeerMode = 'bench' | 'default';

export const PEER_CONFIGURATIONS: Record<PeerMode, string> = {
  bench:
    'oidc-provider 9.13.3, the bench configuration (`--peer bench`): its memory adapter on a store raised from ' +
    "1,000 to 500,000 entries; resource indicators, each client's default resource selecting JWT (ES256) or " +
    'opaque access tokens; introspection limited to the client the token was issued to; PKCE required; ' +
    'ES256 ID tokens; client_secret_basic',
  default:
    "oidc-provider 9.13.3 as its README's quick start runs it (`--peer default`): the shipped memory adapter " +
    '(an LRU of 1,000 entries), no resource indicators, so every access token is opaque (a issues opaque ' +
    'tokens too); the default introspection policy; only what the scenarios need added (the clients with ' +
    'client_secret_basic, clientCredentials and introspection enabled, the scope api:read, an ES256 key). ' +
    'e is not run on it: its store evicts the codes minted before a run',
};
