import { expect } from 'chai';
import { grantProblems, OAUTH_ERROR_STATUS, REPLACEABLE_SERVICES } from '@gatehouse-auth/plugin-api';

describe('contract checks: tables read for their own keys, and frozen', () => {
  it('a grant naming an error by a name every object has (toString) is told to give its status', () => {
    const grant = { parameters: [], handle: () => undefined, errors: ['invalid_grant', 'toString', 'constructor'] };
    expect(grantProblems(grant)).to.deep.equal([
      'names error "toString", which is in no catalogue: give its status',
      'names error "constructor", which is in no catalogue: give its status',
    ]);
  });

  it('a plugin cannot change the error table or the replaceable services for everyone', () => {
    expect(Object.isFrozen(OAUTH_ERROR_STATUS)).to.equal(true);
    expect(Object.isFrozen(REPLACEABLE_SERVICES)).to.equal(true);
    try {
      (OAUTH_ERROR_STATUS as Record<string, number>).invalid_grant = 500;
    } catch {
      // strict mode says so; either way nothing changes
    }
    expect(OAUTH_ERROR_STATUS.invalid_grant).to.equal(400);
  });
});
