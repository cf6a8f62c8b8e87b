import { expect } from 'chai';
import { ApiError, BootError, isBootError, isProtocolError, OAuthError } from '@gatehouse-auth/core';

describe('error brands', () => {
  it('recognise protocol and boot errors by brand, also from another copy of the core', () => {
    expect(isProtocolError(new ApiError(400, 'X', 'x'))).to.equal(true);
    expect(isProtocolError(new OAuthError('invalid_grant', 'x'))).to.equal(true);
    expect(isBootError(new BootError('X', 'x'))).to.equal(true);
    // What a second copy of the module would create: same brand, different class.
    const foreign = Object.assign(new Error('x'), { [Symbol.for('gatehouse.ProtocolError')]: true });
    expect(isProtocolError(foreign)).to.equal(true);
    expect(isProtocolError(new Error('x'))).to.equal(false);
    expect(isProtocolError(null)).to.equal(false);
    expect(isBootError(new ApiError(400, 'X', 'x'))).to.equal(false);
  });
});
