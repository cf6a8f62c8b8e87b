/**
 * An app's keys at its jwks_uri rotate: the server fetches the set again for a kid it does not
 * know (at most once per `oauth.jwks_uri_refetch_seconds`), takes the new key, and refuses the
 * old one once it is gone. A local HTTP server publishes the set the test changes; oauth4webapi
 * signs the client assertions (private_key_jwt, client credentials).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import * as oauth from 'oauth4webapi';
import { startServer, type OAuthServer } from './support.js';

const insecure = { [oauth.allowInsecureRequests]: true } as const;
const ROTATING = 'rotating';

/** A JWKS endpoint whose keys the test sets, counting the fetches. */
class JwksServer {
  keys: JWK[] = [];
  fetches = 0;
  private readonly server = http.createServer((_req, res) => {
    this.fetches += 1;
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ keys: this.keys }));
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/jwks`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

async function signingKey(kid: string): Promise<{ privateKey: CryptoKey; jwk: JWK }> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  return { privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

describe('jwks_uri key rotation (private_key_jwt)', function () {
  const jwks = new JwksServer();
  let jwksUri: string;
  let oldKey: Awaited<ReturnType<typeof signingKey>>;
  let newKey: Awaited<ReturnType<typeof signingKey>>;
  const client: oauth.Client = { client_id: ROTATING };

  before(async function () {
    jwksUri = await jwks.start();
    oldKey = await signingKey('key-2025');
    newKey = await signingKey('key-2026');
  });
  after(() => jwks.close());

  async function serverWith(refetchSeconds?: number): Promise<{ server: OAuthServer; as: oauth.AuthorizationServer }> {
    const server = await startServer({
      apps: [
        {
          client_id: ROTATING,
          token_endpoint_auth_method: 'private_key_jwt',
          jwks_uri: jwksUri,
          grant_types: ['client_credentials'],
          scopes: ['reports.read'],
        },
      ],
      ...(refetchSeconds !== undefined ? { config: { oauth: { jwks_uri_refetch_seconds: refetchSeconds } } } : {}),
    });
    const issuer = new URL(server.issuer);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    return { server, as };
  }

  /** A client credentials request signed with `key`: the token endpoint's status and error. */
  async function tokenWith(as: oauth.AuthorizationServer, key: { privateKey: CryptoKey; jwk: JWK }) {
    const res = await oauth.clientCredentialsGrantRequest(
      as,
      client,
      oauth.PrivateKeyJwt({ key: key.privateKey, kid: key.jwk.kid! }),
      { scope: 'reports.read' },
      insecure,
    );
    const body = (await res.json()) as { error?: string; error_description?: string; access_token?: string };
    return { status: res.status, error: body.error, description: body.error_description };
  }

  it('picks a new kid up at once, keeps the set otherwise, and refuses the old kid once it is gone', async function () {
    jwks.keys = [oldKey.jwk];
    jwks.fetches = 0;
    const { server, as } = await serverWith(0);
    try {
      expect((await tokenWith(as, oldKey)).status).to.equal(200);
      expect((await tokenWith(as, oldKey)).status).to.equal(200);
      expect(jwks.fetches, 'a known kid is served from the cached set').to.equal(1);

      // The app rotates: only the new key is published.
      jwks.keys = [newKey.jwk];
      expect((await tokenWith(as, newKey)).status).to.equal(200);
      expect(jwks.fetches, 'the unknown kid fetched the set again').to.equal(2);

      expect(await tokenWith(as, oldKey)).to.deep.equal({
        status: 401,
        error: 'invalid_client',
        description: 'client_assertion rejected: no applicable key found in the JSON Web Key Set',
      });
      expect((await tokenWith(as, newKey)).status).to.equal(200);
    } finally {
      await server.close();
    }
  });

  it('with the default refetch interval (30 s), a new kid right after a fetch waits: 401 invalid_client', async function () {
    jwks.keys = [oldKey.jwk];
    jwks.fetches = 0;
    const { server, as } = await serverWith();
    try {
      expect((await tokenWith(as, oldKey)).status).to.equal(200);
      jwks.keys = [newKey.jwk];
      expect(await tokenWith(as, newKey)).to.deep.equal({
        status: 401,
        error: 'invalid_client',
        description: 'client_assertion rejected: no applicable key found in the JSON Web Key Set',
      });
      expect(jwks.fetches, 'no fetch within the interval').to.equal(1);
    } finally {
      await server.close();
    }
  });
});
