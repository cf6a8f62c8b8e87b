import { expect } from 'chai';
import { startServer, type OAuthServer } from './support.js';

describe('OAuth: form bodies', () => {
  let server: OAuthServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  it('a token request over 64 KiB → 413 invalid_request, and the server keeps serving', async () => {
    const res = await fetch(server.url('/oauth/token'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `grant_type=client_credentials&pad=${'x'.repeat(70_000)}`,
    });
    expect(res.status).to.equal(413);
    expect(await res.json()).to.include({ error: 'invalid_request' });
    const after = await fetch(server.url('/health/live'));
    expect(after.status).to.equal(200);
  });

  it('a body that is not form-encoded → 400 invalid_request', async () => {
    const res = await fetch(server.url('/oauth/token'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials' }),
    });
    expect(res.status).to.equal(400);
    expect(await res.json()).to.include({ error: 'invalid_request' });
  });
});
