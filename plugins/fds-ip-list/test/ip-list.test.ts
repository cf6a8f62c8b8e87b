import { expect } from 'chai';
import { z, type FdsRule } from '@gatehouse-auth/core';
import { fakeServices, fakeUser, fdsContext, registerWithFakes } from '@gatehouse-auth/testing';
import plugin, { ipListOptions, parseAddress, parseRange } from '../src/index.js';

async function ruleWith(options: Record<string, unknown>): Promise<FdsRule> {
  const { fdsRules } = await registerWithFakes(plugin, options);
  expect(fdsRules).to.have.length(1);
  return fdsRules[0]!;
}

function check(rule: FdsRule, ip: string, phase: 'initiation' | 'verification' = 'verification') {
  return rule.evaluate(
    fdsContext({ services: fakeServices(), user: fakeUser(), method: 'TOTP', request: { ip }, phase }),
  );
}

const ALLOW = { action: 'allow' };
const DENIED = { action: 'deny', reason: 'ip_list.denied' };
const NOT_ALLOWED = { action: 'deny', reason: 'ip_list.not_allowed' };
const BAD_IP = { action: 'deny', reason: 'ip_list.bad_ip' };

describe('@gatehouse-auth/fds-ip-list', () => {
  describe('options', () => {
    it('defaults to two empty lists', () => {
      expect(ipListOptions.parse(undefined)).to.deep.equal({ allow: [], deny: [] });
      expect(ipListOptions.parse({})).to.deep.equal({ allow: [], deny: [] });
    });

    it('accepts IPv4 and IPv6 addresses and ranges', () => {
      const entries = [
        '192.0.2.1',
        '10.0.0.0/8',
        '0.0.0.0/0',
        '2001:db8::1',
        '2001:DB8::/32',
        '::/0',
        '::ffff:10.0.0.0/104',
      ];
      expect(ipListOptions.parse({ allow: entries }).allow).to.deep.equal(entries);
    });

    const bad = [
      '10.0.0.0/33',
      '10.0.0.0/',
      '10.0.0.0/x',
      '10.0.0.0/-1',
      'example.com',
      '',
      ' 10.0.0.1',
      '010.0.0.1',
      '10.0.0',
      '2001:db8::/129',
      'fe80::1%eth0',
      '::ffff:10.0.0.0/64',
      '1.2.3.4/8/8',
    ];
    for (const entry of bad) {
      it(`refuses ${JSON.stringify(entry)} and names it`, () => {
        const result = ipListOptions.safeParse({ allow: ['10.0.0.0/8'], deny: ['192.0.2.1', entry] });
        expect(result.success).to.equal(false);
        expect(result.error?.issues).to.have.length(1);
        expect(result.error?.issues[0]?.path).to.deep.equal(['deny', 1]);
        expect(result.error?.issues[0]?.message).to.equal(
          `${JSON.stringify(entry)} is not an IP address or CIDR range`,
        );
      });
    }

    it('stops registration on a bad entry, and on unknown keys', async () => {
      let error: unknown;
      try {
        await registerWithFakes(plugin, { allow: ['10.0.0.300'] });
      } catch (err) {
        error = err;
      }
      expect(error).to.be.instanceOf(z.ZodError);
      expect((error as z.ZodError).issues.map((i) => [i.path, i.message])).to.deep.equal([
        [['allow', 0], '"10.0.0.300" is not an IP address or CIDR range'],
      ]);
      expect(ipListOptions.safeParse({ denny: ['10.0.0.1'] }).success).to.equal(false);
    });

    it('registers one rule with id "ip_list"', async () => {
      expect((await ruleWith({})).id).to.equal('ip_list');
    });
  });

  describe('parseAddress', () => {
    it('keeps IPv4 and canonicalises IPv6', () => {
      expect(parseAddress('192.0.2.7')).to.deep.equal({ address: '192.0.2.7', family: 'ipv4' });
      expect(parseAddress('2001:DB8:0:0::1')).to.deep.equal({ address: '2001:db8::1', family: 'ipv6' });
      expect(parseAddress('::1')).to.deep.equal({ address: '::1', family: 'ipv6' });
    });

    it('turns IPv4-mapped IPv6 into IPv4, however it is written', () => {
      for (const mapped of ['::ffff:192.0.2.7', '::FFFF:c000:0207', '0:0:0:0:0:ffff:192.0.2.7']) {
        expect(parseAddress(mapped), mapped).to.deep.equal({ address: '192.0.2.7', family: 'ipv4' });
      }
    });

    it('returns null for anything that is not one address', () => {
      for (const text of [
        '',
        'localhost',
        '192.0.2.7:443',
        '192.0.2.7, 198.51.100.1',
        '::ffff:1.2.3.4.5',
        'fe80::1%eth0',
        '1.2.3.256',
      ]) {
        expect(parseAddress(text), text).to.equal(null);
      }
    });
  });

  describe('parseRange', () => {
    it('gives single addresses the full prefix', () => {
      expect(parseRange('192.0.2.7')).to.deep.equal({ address: '192.0.2.7', family: 'ipv4', prefix: 32 });
      expect(parseRange('2001:db8::7')).to.deep.equal({ address: '2001:db8::7', family: 'ipv6', prefix: 128 });
    });

    it('reads prefixes and maps an IPv4-mapped range to IPv4', () => {
      expect(parseRange('10.0.0.0/8')).to.deep.equal({ address: '10.0.0.0', family: 'ipv4', prefix: 8 });
      expect(parseRange('2001:db8::/32')).to.deep.equal({ address: '2001:db8::', family: 'ipv6', prefix: 32 });
      expect(parseRange('::ffff:10.0.0.0/104')).to.deep.equal({ address: '10.0.0.0', family: 'ipv4', prefix: 8 });
      expect(parseRange('::ffff:10.0.0.0/64')).to.equal(null);
    });
  });

  describe('rule', () => {
    it('allows every parseable address when both lists are empty, in both phases', async () => {
      const rule = await ruleWith({});
      expect(await check(rule, '192.0.2.7')).to.deep.equal(ALLOW);
      expect(await check(rule, '2001:db8::7', 'initiation')).to.deep.equal(ALLOW);
    });

    it('denies addresses in a denied IPv4 range or equal to a denied address', async () => {
      const rule = await ruleWith({ deny: ['10.0.0.0/8', '192.0.2.7'] });
      expect(await check(rule, '10.255.1.2')).to.deep.equal(DENIED);
      expect(await check(rule, '192.0.2.7')).to.deep.equal(DENIED);
      expect(await check(rule, '192.0.2.8')).to.deep.equal(ALLOW);
      expect(await check(rule, '11.0.0.1')).to.deep.equal(ALLOW);
    });

    it('denies addresses in a denied IPv6 range, whatever their spelling', async () => {
      const rule = await ruleWith({ deny: ['2001:db8::/32'] });
      expect(await check(rule, '2001:db8:ffff::1')).to.deep.equal(DENIED);
      expect(await check(rule, '2001:0DB8:0000::0001')).to.deep.equal(DENIED);
      expect(await check(rule, '2001:db9::1')).to.deep.equal(ALLOW);
      expect(await check(rule, '10.0.0.1')).to.deep.equal(ALLOW);
    });

    it('matches IPv4-mapped IPv6 request addresses against IPv4 entries', async () => {
      const rule = await ruleWith({ deny: ['10.0.0.0/8'] });
      expect(await check(rule, '::ffff:10.1.2.3')).to.deep.equal(DENIED);
      expect(await check(rule, '::ffff:a01:203')).to.deep.equal(DENIED);
      expect(await check(rule, '::ffff:11.1.2.3')).to.deep.equal(ALLOW);
    });

    it('matches IPv4 request addresses against IPv4-mapped entries', async () => {
      const rule = await ruleWith({ deny: ['::ffff:192.0.2.0/120'] });
      expect(await check(rule, '192.0.2.200')).to.deep.equal(DENIED);
      expect(await check(rule, '192.0.3.1')).to.deep.equal(ALLOW);
    });

    it('with an allow list, allows its members only', async () => {
      const rule = await ruleWith({ allow: ['10.0.0.0/8', '2001:db8::/48'] });
      expect(await check(rule, '10.9.8.7')).to.deep.equal(ALLOW);
      expect(await check(rule, '::ffff:10.9.8.7')).to.deep.equal(ALLOW);
      expect(await check(rule, '2001:db8:0:1::1')).to.deep.equal(ALLOW);
      expect(await check(rule, '2001:db8:1::1')).to.deep.equal(NOT_ALLOWED);
      expect(await check(rule, '192.0.2.7')).to.deep.equal(NOT_ALLOWED);
    });

    it('an IPv4-only allow list refuses IPv6 addresses', async () => {
      const rule = await ruleWith({ allow: ['0.0.0.0/0'] });
      expect(await check(rule, '198.51.100.1')).to.deep.equal(ALLOW);
      expect(await check(rule, '2001:db8::1')).to.deep.equal(NOT_ALLOWED);
    });

    it('lets the deny list win over the allow list', async () => {
      const rule = await ruleWith({ allow: ['10.0.0.0/8'], deny: ['10.66.0.0/16'] });
      expect(await check(rule, '10.66.1.1')).to.deep.equal(DENIED);
      expect(await check(rule, '10.67.1.1')).to.deep.equal(ALLOW);
    });

    it('fails closed on a request address that does not parse', async () => {
      const rule = await ruleWith({});
      for (const ip of ['', 'unknown', '192.0.2.7, 10.0.0.1', 'fe80::1%eth0', '999.1.1.1']) {
        expect(await check(rule, ip), ip).to.deep.equal(BAD_IP);
      }
    });
  });
});
