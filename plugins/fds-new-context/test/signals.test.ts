import { expect } from 'chai';
import { deviceKey, hourDistance, networkPrefix, primaryLanguage } from '../src/index.js';
import { UA } from './user-agents.js';

describe('@gatehouse-auth/fds-new-context helpers', () => {
  describe('deviceKey', () => {
    it('is browser family, OS name and platform type, lower case', () => {
      expect(deviceKey({ userAgent: UA.chrome120Linux })).to.equal('ua:chrome|linux|desktop');
      expect(deviceKey({ userAgent: UA.firefox121Windows })).to.equal('ua:firefox|windows|desktop');
      expect(deviceKey({ userAgent: UA.safariIphone })).to.equal('ua:safari|ios|mobile');
    });

    it('ignores versions: a browser upgrade is the same device', () => {
      expect(deviceKey({ userAgent: UA.chrome121Linux })).to.equal(deviceKey({ userAgent: UA.chrome120Linux }));
      expect(deviceKey({ userAgent: UA.firefox122Windows })).to.equal(deviceKey({ userAgent: UA.firefox121Windows }));
    });

    it('tells apart another browser, another OS and another platform', () => {
      const keys = [UA.chrome120Linux, UA.chrome120Windows, UA.firefox121Windows, UA.safariMac, UA.safariIphone].map(
        (userAgent) => deviceKey({ userAgent }),
      );
      expect(new Set(keys).size).to.equal(5);
    });

    it('prefers the device id when there is one', () => {
      expect(deviceKey({ userAgent: UA.chrome120Linux, deviceId: 'dev-1' })).to.equal('id:dev-1');
      expect(deviceKey({ userAgent: UA.chrome120Linux, deviceId: null })).to.equal('ua:chrome|linux|desktop');
    });

    it('gives every missing or empty user agent one key, and survives garbage', () => {
      expect(deviceKey({ userAgent: '' })).to.equal('ua:unknown');
      expect(deviceKey({ userAgent: '   ' })).to.equal('ua:unknown');
      expect(deviceKey({ userAgent: null })).to.equal('ua:unknown');
      expect(deviceKey({})).to.equal('ua:unknown');
      expect(deviceKey({ userAgent: 'curl/8.5.0' })).to.equal('ua:||');
      expect(deviceKey({ userAgent: 'x'.repeat(100_000) })).to.equal('ua:||');
    });
  });

  describe('networkPrefix', () => {
    it('is the /24 of an IPv4 address', () => {
      expect(networkPrefix('203.0.113.10')).to.equal('203.0.113.0/24');
      expect(networkPrefix('203.0.113.250')).to.equal('203.0.113.0/24');
      expect(networkPrefix('203.0.114.10')).to.equal('203.0.114.0/24');
    });

    it('is the /48 of an IPv6 address, whatever its spelling', () => {
      expect(networkPrefix('2001:db8:abcd:12::1')).to.equal('2001:db8:abcd::/48');
      expect(networkPrefix('2001:0DB8:ABCD:0012:0000:0000:0000:0001')).to.equal('2001:db8:abcd::/48');
      expect(networkPrefix('2001:db8::1')).to.equal('2001:db8:0::/48');
      expect(networkPrefix('::1:2:3:4:5:6')).to.equal('0:0:1::/48');
      expect(networkPrefix('::1')).to.equal('0:0:0::/48');
      expect(networkPrefix('2001:db8:1:2:3:4:5:6')).to.equal('2001:db8:1::/48');
    });

    it('treats IPv4-mapped IPv6 as IPv4', () => {
      expect(networkPrefix('::ffff:203.0.113.10')).to.equal('203.0.113.0/24');
      expect(networkPrefix('::ffff:cb00:710a')).to.equal('203.0.113.0/24');
    });

    it('is null for anything that is not an address', () => {
      for (const ip of ['', 'unknown', '203.0.113', '203.0.113.10:443', 'fe80::1%eth0']) {
        expect(networkPrefix(ip), ip).to.equal(null);
      }
    });
  });

  describe('primaryLanguage', () => {
    it('is the primary subtag of the first entry, lower case', () => {
      expect(primaryLanguage('en-US,en;q=0.9')).to.equal('en');
      expect(primaryLanguage('DE-de')).to.equal('de');
      expect(primaryLanguage('fr;q=0.8, en')).to.equal('fr');
      expect(primaryLanguage(' zh-Hant-TW , en')).to.equal('zh');
      expect(primaryLanguage('*')).to.equal('*');
    });

    it('is null when there is no usable tag', () => {
      for (const header of ['', ';q=1', '12-34', 'en_US', null, undefined]) {
        expect(primaryLanguage(header), String(header)).to.equal(null);
      }
    });
  });

  describe('hourDistance', () => {
    it('measures around the 24-hour clock', () => {
      expect(hourDistance(5, 5)).to.equal(0);
      expect(hourDistance(23, 1)).to.equal(2);
      expect(hourDistance(1, 23)).to.equal(2);
      expect(hourDistance(0, 12)).to.equal(12);
      expect(hourDistance(0, 18)).to.equal(6);
      expect(hourDistance(13, 2)).to.equal(11);
    });
  });
});
