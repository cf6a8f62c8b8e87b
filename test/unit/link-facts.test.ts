import { expect } from 'chai';
import { browserName } from '../../core/dist/util/user-agent.js';
import { linkFactsOf, linkState, newLinkFacts } from '../../core/dist/verification/link-facts.js';
import { fakeRequest } from '@gatehouse-auth/testing';

describe('sign-in links: what the page on another device shows', function () {
  it('names the browser and system of common user agents, and nothing it does not recognise', function () {
    const cases: [string, string | null, string | null][] = [
      ['Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0', 'Firefox', 'Windows'],
      [
        'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
        'Edge',
        'Windows',
      ],
      [
        'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
        'Chrome',
        'Android',
      ],
      [
        'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
        'Safari',
        'iPhone',
      ],
      [
        'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
        'Chrome',
        'macOS',
      ],
      ['Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0', 'Firefox', 'Linux'],
      ['curl/8.5.0', null, null],
      ['', null, null],
    ];
    for (const [ua, browser, os] of cases) expect(browserName(ua), ua).to.deep.equal({ browser, os });
  });

  it('draws two digits from crypto randomness, not the same every time', function () {
    const request = fakeRequest({ userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Firefox/133.0' });
    const now = new Date('2026-11-27T18:00:00Z');
    const drawn = Array.from({ length: 50 }, () => newLinkFacts(request, now));
    for (const facts of drawn) {
      expect(facts.number).to.be.within(10, 99);
      expect(facts).to.deep.include({ browser: 'Firefox', os: 'Linux', startedAt: now.getTime() });
    }
    expect(new Set(drawn.map((f) => f.number)).size).to.be.greaterThan(1);
  });

  it('are kept in the exchange state and read back; an exchange without them shows none', function () {
    const facts = { number: 42, browser: 'Safari', os: null, startedAt: 1 };
    const state = { code_mac: 'm', ...linkState(facts) };
    expect(linkFactsOf(state)).to.deep.equal(facts);
    expect(linkState(undefined)).to.deep.equal({});
    expect(linkFactsOf({ code_mac: 'm' })).to.equal(null);
    expect(linkFactsOf({ _link: { number: '42', startedAt: 1 } })).to.equal(null);
  });
});
