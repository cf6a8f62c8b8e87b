import { expect } from 'chai';
import { startServer, type OAuthServer } from './support.js';
import { OAuthError } from '../../core/src/oauth/errors.js';
import { parseStrict } from '../../core/src/oauth/form.js';

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

describe('OAuth: the form parser reads what URLSearchParams reads', () => {
  /** The rules before the hand-written parser: URLSearchParams, a repeat refused, empty = absent. */
  function reference(text: string): Record<string, string> | 'repeated' {
    const out: Record<string, string> = {};
    const seen = new Set<string>();
    for (const [key, value] of new URLSearchParams(text)) {
      if (seen.has(key)) return 'repeated';
      seen.add(key);
      if (value !== '') out[key] = value;
    }
    return out;
  }
  function parsed(text: string): Record<string, string> | 'repeated' {
    try {
      return parseStrict(text);
    } catch (err) {
      expect(err).to.be.instanceOf(OAuthError);
      expect((err as OAuthError).code).to.equal('invalid_request');
      return 'repeated';
    }
  }

  it('agrees on escapes, plus signs, bare names, empty parts, malformed and non-UTF-8 escapes', () => {
    const cases = [
      '',
      'grant_type=client_credentials&scope=api%3Aread',
      'a=1&&b=2&',
      'a&b=&c==d',
      'x=%E2%82%AC+%2B+y',
      'x=%FF', // not UTF-8: URLSearchParams puts U+FFFD
      'x=%zz&y=%', // not escapes: kept as they are
      'a=1&a=2',
      'a=&a=1', // a repeat even when the first is empty
      '%61=1&a=2', // the same name once decoded
      '+=1&%20=2',
    ];
    for (const text of cases) expect(parsed(text), text).to.deep.equal(reference(text));
  });

  it('agrees on 20,000 random bodies', () => {
    const pieces = ['a', 'b', '=', '&', '%', '2', '0', 'F', 'C', '+', 'é', '%E2%82%AC', '%FF', '%zz', '%%', '=='];
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 20_000; i += 1) {
      let text = '';
      for (let n = Math.floor(random() * 12); n > 0; n -= 1) text += pieces[Math.floor(random() * pieces.length)];
      expect(parsed(text), text).to.deep.equal(reference(text));
    }
  });
});
