import { expect } from 'chai';
import { safeEqual, safeEqualDigest, sha256 } from '../../core/dist/util/crypto.js';

describe('constant-time comparisons', () => {
  it('safeEqualDigest compares two SHA-256 digests and refuses anything else', () => {
    expect(safeEqualDigest(sha256('secret'), sha256('secret'))).to.equal(true);
    expect(safeEqualDigest(sha256('secret'), sha256('Secret'))).to.equal(false);
    expect(safeEqualDigest('short', 'short')).to.equal(false);
    expect(safeEqualDigest(sha256('x'), '')).to.equal(false);
  });

  it('safeEqual compares strings of any length', () => {
    expect(safeEqual('a', 'a')).to.equal(true);
    expect(safeEqual('a', 'ab')).to.equal(false);
    expect(safeEqual('', '')).to.equal(true);
  });
});
