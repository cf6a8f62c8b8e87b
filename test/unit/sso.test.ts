import { expect } from 'chai';
import { createLogger, type Session } from '@gatehouse-auth/core';
import { FakeClock, fakeRequest, fakeUser } from '@gatehouse-auth/testing';
import { SingleSignOn, type SsoVerifier } from '../../core/dist/oauth/sso.js';

describe('SingleSignOn: what a session is worth to an app', function () {
  const clock = new FakeClock();
  const now = () => Math.floor(clock.now().getTime() / 1000);
  const alice = fakeUser();
  const request = fakeRequest();
  const logger = createLogger('silent');
  const demoApp = [['PASSWORD'], ['TOTP', 'SMS', 'BACKUPCODE']];

  function sso(opts: { status?: 'active' | 'disabled'; enrolled?: string[]; fds?: 'allow' | 'step_up' | 'deny' } = {}) {
    const verifier: SsoVerifier = {
      isEnrolled: async (_u, method) => (opts.enrolled ?? ['PASSWORD', 'TOTP', 'SMS', 'BACKUPCODE']).includes(method),
      checkSession: async () => ({ action: opts.fds ?? 'allow' }),
      stepUpMethods: (_c, used) => ['PASSWORD', 'TOTP', 'SMS'].filter((m) => ![...used].includes(m)),
    };
    const user = { ...alice, status: opts.status ?? 'active' };
    return new SingleSignOn({ users: { findById: async () => user }, verifier, clock });
  }
  const session = (methods: [string, number][]): Session => ({
    key: 'k',
    sid: 's',
    userId: alice.id,
    createdAt: clock.now(),
    authTime: now(),
    amr: [],
    methods: methods.map(([method, age]) => ({ method, amr: [], at: now() - age })),
    expiresAt: new Date(clock.now().getTime() + 3_600_000),
  });
  const ask = (extra: { prompt?: string[]; maxAge?: number | null; stages?: string[][] } = {}) => ({
    clientId: 'demo-app',
    loginStages: extra.stages ?? demoApp,
    singleFactorMethods: [],
    prompt: extra.prompt ?? [],
    maxAge: extra.maxAge ?? null,
    request,
    logger,
  });

  it('no session, prompt=login, max_age=0 or a disabled user: none', async function () {
    const s = session([
      ['PASSWORD', 10],
      ['TOTP', 5],
    ]);
    expect((await sso().decide(null, ask())).kind).to.equal('none');
    expect((await sso().decide(s, ask({ prompt: ['login'] }))).kind).to.equal('none');
    expect((await sso().decide(s, ask({ maxAge: 0 }))).kind).to.equal('none');
    expect((await sso({ status: 'disabled' }).decide(s, ask())).kind).to.equal('none');
  });

  it('a session not used to sign in for longer than idleSeconds: none (its last sign-in made its row)', async function () {
    const verifier: SsoVerifier = {
      isEnrolled: async () => true,
      checkSession: async () => ({ action: 'allow' }),
      stepUpMethods: () => [],
    };
    const idle = new SingleSignOn({ users: { findById: async () => alice }, verifier, clock, idleSeconds: 3600 });
    const s = session([
      ['PASSWORD', 10],
      ['TOTP', 5],
    ]);
    expect((await idle.decide(s, ask())).kind).to.equal('satisfied');
    clock.advance(3600);
    expect((await idle.decide(s, ask())).kind, 'at the limit').to.equal('satisfied');
    clock.advance(1);
    expect((await idle.decide(s, ask())).kind, 'past it').to.equal('none');
    // A sign-in through it renews the row: a session made now is fresh again.
    expect(
      (
        await idle.decide(
          session([
            ['PASSWORD', 10],
            ['TOTP', 5],
          ]),
          ask(),
        )
      ).kind,
    ).to.equal('satisfied');
  });

  it('a password-only session: the second stage is left, the password carried', async function () {
    const decision = await sso().decide(session([['PASSWORD', 10]]), ask());
    expect(decision).to.deep.include({ kind: 'login', stages: [['TOTP', 'SMS', 'BACKUPCODE']], stale: false });
  });

  it('a method no longer set up does not count', async function () {
    const decision = await sso({ enrolled: ['PASSWORD'] }).decide(
      session([
        ['PASSWORD', 10],
        ['TOTP', 5],
      ]),
      ask(),
    );
    expect(decision).to.deep.include({ kind: 'login', stages: [['TOTP', 'SMS', 'BACKUPCODE']] });
  });

  it('max_age drops older completions and marks the decision stale', async function () {
    const decision = await sso().decide(
      session([
        ['PASSWORD', 500],
        ['TOTP', 5],
      ]),
      ask({ maxAge: 60 }),
    );
    expect(decision).to.deep.include({ kind: 'login', stages: [['PASSWORD']], stale: true });
  });

  it('FDS: deny → none; step-up → one more method; step-up with none left → none', async function () {
    const both = session([
      ['PASSWORD', 10],
      ['TOTP', 5],
    ]);
    expect((await sso({ fds: 'deny' }).decide(both, ask())).kind).to.equal('none');
    expect(await sso({ fds: 'step_up' }).decide(both, ask())).to.deep.include({ kind: 'login', stages: [['SMS']] });
    const all = session([
      ['PASSWORD', 10],
      ['TOTP', 5],
      ['SMS', 3],
    ]);
    expect((await sso({ fds: 'step_up' }).decide(all, ask())).kind).to.equal('none');
    expect((await sso().decide(all, ask())).kind).to.equal('satisfied');
  });
});
