import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRemoteJWKSet, jwtVerify } from 'jose';

/** The demo app's registration in config/default.yaml. */
export interface DemoApp {
  clientId: string;
  clientSecret: string;
  /** Where the browser comes back: this client's /callback. */
  redirectUri: string;
}

interface Pending {
  verifier: string;
  nonce: string;
  createdAt: number;
}

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Where Gatehouse's end-session endpoint sends the browser back (a post-logout redirect URI). */
export const SIGNED_OUT_PATH = '/signed-out';

/** A page; its footer links `/` to sign in, or `footer` instead (the signed-in page's sign-out). */
function page(res: ServerResponse, status: number, title: string, body: string, footer?: string): void {
  res.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
    'Cache-Control': 'no-store',
  });
  res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem}pre{background:#f4f4f4;padding:1rem;overflow:auto}</style>
</head><body><h1>${escape(title)}</h1>${body}<p>${footer ?? '<a href="/">Sign in</a>'}</p></body></html>`);
}

/**
 * A small OAuth client, as an app would be: `/` sends the browser to Gatehouse with PKCE, state
 * and nonce; `/callback` checks the state, exchanges the code, verifies the ID token against the
 * JWKS (issuer, audience, nonce) and shows its claims.
 */
export class DemoClient {
  private readonly pending = new Map<string, Pending>();
  private server: Server | null = null;
  private issuer = '';
  /** Where this client calls Gatehouse itself (token, JWKS, UserInfo). */
  private backChannel = '';
  private app: DemoApp | null = null;
  private jwks: ReturnType<typeof createRemoteJWKSet> | null = null;

  /** Set once Gatehouse is up: the client listens first, as the redirect URI names its port. */
  configure(issuer: string, backChannel: string, app: DemoApp): void {
    this.issuer = issuer;
    this.backChannel = backChannel;
    this.app = app;
    this.jwks = createRemoteJWKSet(new URL(`${backChannel}/.well-known/jwks.json`));
  }

  async listen(host: string, port: number): Promise<number> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) =>
        page(res, 500, 'The demo client failed', `<pre>${escape(String(err))}</pre>`),
      );
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, host, resolve);
    });
    return (this.server.address() as AddressInfo).port;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://demo.invalid');
    const app = this.app;
    if (!app) return page(res, 503, 'Starting', '<p>Gatehouse is still starting; reload in a moment.</p>');
    if (url.pathname === '/') return this.start(app, res);
    if (url.pathname === '/callback') return this.callback(app, url, res);
    if (url.pathname === SIGNED_OUT_PATH) {
      return page(res, 200, 'Signed out', '<p>Gatehouse ended your session: the next sign-in asks again.</p>');
    }
    page(res, 404, 'Not found', `<p>The demo client has /, /callback and ${SIGNED_OUT_PATH}.</p>`);
  }

  /** Sends the browser to the authorization endpoint with PKCE (S256), state and nonce. */
  private start(app: DemoApp, res: ServerResponse): void {
    const state = randomBytes(16).toString('base64url');
    const verifier = randomBytes(32).toString('base64url');
    const nonce = randomBytes(16).toString('base64url');
    // Abandoned sign-ins are forgotten after 10 minutes.
    for (const [key, p] of this.pending) if (Date.now() - p.createdAt > 600_000) this.pending.delete(key);
    this.pending.set(state, { verifier, nonce, createdAt: Date.now() });
    const authorize = new URL(`${this.issuer}/api/oauth2/authorize/`);
    authorize.search = new URLSearchParams({
      client_id: app.clientId,
      response_type: 'code',
      scope: 'openid profile email',
      redirect_uri: app.redirectUri,
      state,
      nonce,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    res.writeHead(303, { Location: authorize.toString(), 'Cache-Control': 'no-store' });
    res.end();
  }

  private async callback(app: DemoApp, url: URL, res: ServerResponse): Promise<void> {
    const q = url.searchParams;
    const pending = this.pending.get(q.get('state') ?? '');
    if (!pending)
      return page(res, 400, 'Unknown sign-in', '<p>The state does not match a sign-in this client started.</p>');
    this.pending.delete(q.get('state')!);
    if (q.get('iss') !== this.issuer)
      return page(res, 400, 'Wrong issuer', `<p>iss was ${escape(q.get('iss') ?? '(none)')}.</p>`);
    if (q.get('error')) {
      return page(
        res,
        400,
        'Gatehouse said no',
        `<p><code>${escape(q.get('error')!)}</code>: ${escape(q.get('error_description') ?? '')}</p>`,
      );
    }
    const tokenRes = await fetch(`${this.backChannel}/oauth/token`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: q.get('code') ?? '',
        redirect_uri: app.redirectUri,
        code_verifier: pending.verifier,
      }),
    });
    const tokens = (await tokenRes.json()) as Record<string, string>;
    if (!tokenRes.ok) {
      return page(res, 502, 'The code exchange failed', `<pre>${escape(JSON.stringify(tokens, null, 2))}</pre>`);
    }
    const { payload } = await jwtVerify(tokens.id_token!, this.jwks!, { issuer: this.issuer, audience: app.clientId });
    if (payload.nonce !== pending.nonce)
      return page(res, 400, 'Wrong nonce', '<p>The ID token is not for this sign-in.</p>');
    // The profile and email claims come from UserInfo (OIDC Core §5.4), with the access token.
    const info = (await (
      await fetch(`${this.backChannel}/userinfo`, { headers: { Authorization: `Bearer ${tokens.access_token}` } })
    ).json()) as Record<string, unknown>;
    page(
      res,
      200,
      `Signed in as ${String(info.preferred_username ?? payload.sub)}`,
      `<p>The ID token's signature, issuer, audience and nonce check out. Its claims:</p>
<pre id="claims">${escape(JSON.stringify(payload, null, 2))}</pre>
<p>UserInfo:</p>
<pre id="userinfo">${escape(JSON.stringify(info, null, 2))}</pre>
<p>Methods used (<code>amr</code>): <strong id="amr">${escape(((payload.amr as string[] | undefined) ?? []).join(', '))}</strong></p>`,
      `<a id="sign-out" href="${escape(this.signOutUrl(app, tokens.id_token!))}">Sign out</a>`,
    );
  }

  /**
   * RP-Initiated Logout: Gatehouse's end-session endpoint with the ID token as hint, so it ends
   * this user's session without asking, then sends the browser back to SIGNED_OUT_PATH.
   */
  private signOutUrl(app: DemoApp, idToken: string): string {
    const url = new URL(`${this.issuer}/session/end_session`);
    url.search = new URLSearchParams({
      id_token_hint: idToken,
      client_id: app.clientId,
      post_logout_redirect_uri: new URL(SIGNED_OUT_PATH, app.redirectUri).toString(),
    }).toString();
    return url.toString();
  }
}
