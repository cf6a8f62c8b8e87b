import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ApiError, buildApp, type Gatehouse, type JsonObject, type UserRecord } from '@gatehouse-auth/core';
import { FakeClock } from '@gatehouse-auth/testing';
// Migrations and the record store are internal (not part of the public API).
import { MIGRATIONS, migrate, pendingMigrations } from '../../core/dist/storage/migrate.js';
import { recordStore } from '../../core/dist/storage/stores.js';
import { peerBusFor, testConfig } from '../support/config.js';
import { withPostgresDatabase } from '../support/postgres.js';

/** Awaits `promise`, expecting an ApiError; returns it. */
async function apiErrorOf(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(ApiError);
    return err as ApiError;
  }
  expect.fail('expected an ApiError');
}

const unique = (prefix: string) => `${prefix}${randomUUID().slice(0, 8)}`;

/**
 * The storage suite, run once per database. `databaseUrl` is read in `before`, so a
 * PostgreSQL database created by an earlier hook can provide it.
 */
function storageSuite(dialect: 'sqlite' | 'postgres', databaseUrl: () => string): void {
  let gatehouse: Gatehouse;
  const clock = new FakeClock(new Date('2026-03-01T10:00:00Z'));
  const migrations = {
    pendingBefore: [] as string[],
    first: [] as string[],
    second: [] as string[],
    pendingAfter: [] as string[],
  };

  before(async function () {
    this.timeout(20_000);
    gatehouse = await buildApp(testConfig(peerBusFor(databaseUrl()), { database: { url: databaseUrl() } }), {
      clock,
      migrate: false,
    });
    const { sequelize } = gatehouse.container.cradle;
    migrations.pendingBefore = await pendingMigrations(sequelize, gatehouse.logger);
    migrations.first = await migrate(sequelize, gatehouse.logger);
    migrations.second = await migrate(sequelize, gatehouse.logger);
    migrations.pendingAfter = await pendingMigrations(sequelize, gatehouse.logger);
  });
  after(async () => {
    await gatehouse?.close();
  });

  const users = () => gatehouse.container.cradle.users;
  const services = () => gatehouse.container.cradle.services;
  const newUser = (overrides: { email?: string; phone?: string } = {}) =>
    users().create({ username: unique('user-'), ...overrides });

  it('applies every migration once; a second run applies nothing', () => {
    const all = MIGRATIONS.map((m) => m.name);
    expect(all.slice(0, 2)).to.deep.equal(['001-users', '002-stores']);
    expect(migrations).to.deep.equal({ pendingBefore: all, first: all, second: [], pendingAfter: [] });
  });

  describe('users', () => {
    it('creates a user and finds it by id, username, email (any case) and phone', async () => {
      const username = unique('alice-');
      const created = await users().create({ username, email: ` ${username}@Example.COM `, phone: '+15551234567' });
      expect(created).to.deep.equal({
        id: created.id,
        username,
        email: `${username}@example.com`,
        phone: '+15551234567',
        status: 'active',
      });
      expect(created.id).to.match(/^[0-9a-f-]{36}$/);
      expect(await users().findById(created.id)).to.deep.equal(created);
      expect(await users().findByIdentifier(username)).to.deep.equal(created);
      expect(await users().findByIdentifier(`${username}@EXAMPLE.com`)).to.deep.equal(created);
      expect(await users().findByIdentifier('+15551234567')).to.deep.equal(created);
      expect(await users().findById(randomUUID())).to.equal(null);
      expect(await users().findByIdentifier('nobody-here')).to.equal(null);
      expect(await users().findByIdentifier('   ')).to.equal(null);
    });

    it('lists users in creation order, with limit and offset', async () => {
      const made: UserRecord[] = [];
      for (let i = 0; i < 3; i++) {
        // created_at has millisecond resolution and ties are ordered by id, so each user (the
        // first one too: the previous test's user may share its millisecond) gets its own.
        await new Promise((resolve) => setTimeout(resolve, 3));
        made.push(await newUser());
      }
      const ids = made.map((u) => u.id);
      const all = (await users().list({ limit: 1000 })).filter((u) => ids.includes(u.id));
      expect(all).to.deep.equal(made);
      const everyone = await users().list({ limit: 1000 });
      const start = everyone.findIndex((u) => u.id === made[0]!.id);
      expect(await users().list({ offset: start + 1, limit: 1 })).to.deep.equal([made[1]]);
    });

    it('a duplicate username is 409 USER_EXISTS', async () => {
      const first = await newUser();
      const err = await apiErrorOf(users().create({ username: first.username }));
      expect([err.status, err.code]).to.deep.equal([409, 'USER_EXISTS']);
    });

    it('a duplicate email (in another case) or phone is 409 USER_EXISTS', async () => {
      const email = `${unique('bob-')}@example.com`;
      const phone = `+1555${String(Date.now()).slice(-7)}`;
      await newUser({ email, phone });
      const byEmail = await apiErrorOf(newUser({ email: email.toUpperCase() }));
      expect([byEmail.status, byEmail.code]).to.deep.equal([409, 'USER_EXISTS']);
      const byPhone = await apiErrorOf(newUser({ phone }));
      expect([byPhone.status, byPhone.code]).to.deep.equal([409, 'USER_EXISTS']);
    });

    it("identifiers are one namespace: a username may not be another user's email or phone, in any case", async () => {
      const email = `${unique('dan-')}@example.com`;
      const phone = `+1556${String(Date.now()).slice(-7)}`;
      const first = await newUser({ email, phone });
      const asEmail = await apiErrorOf(users().create({ username: email.toUpperCase() }));
      expect([asEmail.status, asEmail.code, asEmail.details]).to.deep.equal([
        409,
        'USER_EXISTS',
        { field: 'username' },
      ]);
      expect((await apiErrorOf(users().create({ username: phone }))).code).to.equal('USER_EXISTS');
      // The other way round: an email equal to an existing username.
      const named = await users().create({ username: `${unique('erin-')}@example.com` });
      const byName = await apiErrorOf(newUser({ email: named.username }));
      expect([byName.code, byName.details]).to.deep.equal(['USER_EXISTS', { field: 'email' }]);
      // Nothing was stored by the refusals, and both still sign in by their identifiers.
      expect(await users().findByIdentifier(email)).to.deep.equal(first);
      expect(await users().findByIdentifier(named.username)).to.deep.equal(named);
    });

    it('creations racing for one identifier: exactly one wins, the others are 409', async () => {
      const shared = `${unique('race-')}@example.com`;
      const attempts = await Promise.allSettled([
        users().create({ username: shared }),
        users().create({ username: unique('r1-'), email: shared }),
        users().create({ username: unique('r2-'), email: shared.toUpperCase() }),
        users().create({ username: shared.toUpperCase() }),
      ]);
      expect(attempts.filter((a) => a.status === 'fulfilled')).to.have.length(1);
      for (const a of attempts.filter((x): x is PromiseRejectedResult => x.status === 'rejected')) {
        expect((a.reason as ApiError).code).to.equal('USER_EXISTS');
      }
    });

    it('rows an earlier release let collide: the lookup prefers username, then email, then phone', async () => {
      const { sql } = gatehouse.container.cradle;
      const shared = `${unique('legacy-')}@example.com`;
      const now = dialect === 'postgres' ? new Date() : '2026-01-01 00:00:00.000 +00:00';
      const byEmail = { id: randomUUID(), username: unique('le-'), email: shared, phone: null };
      const byName = { id: randomUUID(), username: shared, email: null, phone: null };
      for (const row of [byEmail, byName]) {
        await sql.exec(
          `INSERT INTO users (id, username, email, phone, status, created_at, updated_at)
           VALUES (:id, :username, :email, :phone, 'active', :now, :now)`,
          { ...row, now },
        );
      }
      expect((await users().findByIdentifier(shared))?.id).to.equal(byName.id);
    });

    it('a duplicate names the field that collides', async () => {
      const email = `${unique('carol-')}@example.com`;
      const first = await newUser({ email });
      const byName = await apiErrorOf(users().create({ username: first.username }));
      expect(byName.message).to.equal('a user with this username already exists');
      expect(byName.details).to.deep.equal({ field: 'username' });
      const byEmail = await apiErrorOf(newUser({ email }));
      expect(byEmail.message).to.equal('a user with this email already exists');
      expect(byEmail.details).to.deep.equal({ field: 'email' });
    });

    for (const [field, input] of [
      ['username', { username: 'has space' }],
      ['username', { username: '' }],
      ['email', { email: 'not-an-email' }],
      ['email', { email: 'a@b' }],
      ['phone', { phone: '5551234567' }],
      ['phone', { phone: '+0123456789' }],
    ] as const) {
      it(`an invalid ${field} (${JSON.stringify(Object.values(input)[0])}) is 400 INVALID_FIELD and stores nothing`, async () => {
        const username = unique('invalid-');
        const before = (await users().list({ limit: 1000 })).length;
        const err = await apiErrorOf(users().create(Object.assign({ username }, input)));
        expect([err.status, err.code]).to.deep.equal([400, 'INVALID_FIELD']);
        expect(err.details).to.deep.equal({ field });
        expect(await users().findByIdentifier(username)).to.equal(null);
        expect((await users().list({ limit: 1000 })).length).to.equal(before);
      });
    }
  });

  describe('setAddress and erase (issue 27)', () => {
    it('moves an email or phone and its identifier; another user’s is 409 USER_EXISTS, a bad one 400', async () => {
      const user = await newUser({ email: `${unique('old-')}@example.test`, phone: '+15550001111' });
      const other = await newUser({ email: `${unique('other-')}@example.test` });
      const fresh = `${unique('New-')}@Example.test`;
      expect(await users().setAddress(user.id, 'email', fresh)).to.equal(true);
      expect((await users().findById(user.id))!.email).to.equal(fresh.toLowerCase());
      expect((await users().findByIdentifier(fresh))!.id).to.equal(user.id);
      expect(await users().findByIdentifier(user.email!)).to.equal(null);
      // The old one is free again: another user may take it.
      expect(await users().setAddress(other.id, 'email', user.email!)).to.equal(true);
      const taken = await apiErrorOf(users().setAddress(user.id, 'email', user.email!));
      expect([taken.status, taken.code]).to.deep.equal([409, 'USER_EXISTS']);
      // One namespace: another user's username that looks like an email is taken too.
      const named = await users().create({ username: `${unique('name-')}@example.test` });
      const byUsername = await apiErrorOf(users().setAddress(user.id, 'email', named.username));
      expect([byUsername.status, byUsername.code]).to.deep.equal([409, 'USER_EXISTS']);
      const bad = await apiErrorOf(users().setAddress(user.id, 'phone', '5551234567'));
      expect([bad.status, bad.code]).to.deep.equal([400, 'INVALID_FIELD']);
      expect(await users().setAddress(user.id, 'phone', null)).to.equal(true);
      expect(await users().findByIdentifier('+15550001111')).to.equal(null);
      expect(await users().setAddress('no-such-user', 'phone', '+15550002222')).to.equal(false);
    });

    it('erases the user and every row naming them, and nothing of another user', async () => {
      const user = await newUser({ email: `${unique('gone-')}@example.test` });
      const kept = await newUser();
      for (const who of [user, kept]) {
        await services().credentials(who.id, 'TOTP').add({ type: 'seed', secret: 'x' });
        await services().events.record({ type: 'test.erase', userId: who.id });
      }
      const records = recordStore(gatehouse.container.cradle.sql, clock, 'test-erase');
      await records.put(`profile:${user.id}`, { a: 1 });
      await records.put('other-key', { user_id: user.id });
      await records.put(`profile:${kept.id}`, { a: 1 });
      expect(await users().erase(user.id)).to.equal(true);
      expect(await users().findById(user.id)).to.equal(null);
      expect(await users().findByIdentifier(user.email!)).to.equal(null);
      expect(await services().credentials(user.id, 'TOTP').list()).to.have.length(0);
      expect(await records.get(`profile:${user.id}`)).to.equal(null);
      expect(await records.get('other-key')).to.equal(null);
      expect(await records.get(`profile:${kept.id}`)).to.not.equal(null);
      expect(await services().credentials(kept.id, 'TOTP').list()).to.have.length(1);
      expect(await gatehouse.container.cradle.events.recent({ userId: kept.id, types: ['test.erase'] })).to.have.length(
        1,
      );
      expect(await gatehouse.container.cradle.events.recent({ userId: user.id, types: ['test.erase'] })).to.have.length(
        0,
      );
      expect(await users().erase(user.id)).to.equal(false);
    });
  });

  describe('credentials', () => {
    let user: UserRecord;
    beforeEach(async () => {
      user = await newUser();
    });
    const store = (method = 'TOTP', userId = user.id) => services().credentials(userId, method);

    it('adds, gets and lists credentials of one user and method, optionally by type', async () => {
      const seed = await store().add({ type: 'seed', label: 'phone', secret: 'sealed', data: { digits: 6 } });
      clock.advance(1);
      const spare = await store().add({ type: 'spare' });
      expect(seed).to.deep.equal({
        id: seed.id,
        userId: user.id,
        method: 'TOTP',
        type: 'seed',
        label: 'phone',
        secret: 'sealed',
        data: { digits: 6 },
        counter: 0,
        usedAt: null,
        createdAt: new Date(clock.now().getTime() - 1000),
        deviceId: null,
      });
      expect(await store().get(seed.id)).to.deep.equal(seed);
      expect(await store().list()).to.deep.equal([seed, spare]);
      expect(await store().list('spare')).to.deep.equal([spare]);
      expect(await store().list('none')).to.deep.equal([]);
    });

    it('is scoped to the user and the method', async () => {
      const other = await newUser();
      const cred = await store().add({ type: 'seed', secret: 's' });
      expect(await store('SMS').get(cred.id)).to.equal(null);
      expect(await store('SMS').list()).to.deep.equal([]);
      expect(await store('TOTP', other.id).get(cred.id)).to.equal(null);
      expect(await store('TOTP', other.id).remove(cred.id)).to.equal(false);
      expect(await store('TOTP', other.id).markUsed(cred.id)).to.equal(false);
      expect((await store().get(cred.id))!.usedAt).to.equal(null);
    });

    it('markUsed succeeds once and records the time', async () => {
      const cred = await store().add({ type: 'code', secret: 'h' });
      clock.advance(5);
      expect(await store().markUsed(cred.id)).to.equal(true);
      expect(await store().markUsed(cred.id)).to.equal(false);
      expect((await store().get(cred.id))!.usedAt).to.deep.equal(clock.now());
      expect(await store().markUsed(randomUUID())).to.equal(false);
    });

    it('10 concurrent markUsed: exactly one wins', async () => {
      const cred = await store().add({ type: 'code', secret: 'h' });
      const results = await Promise.all(Array.from({ length: 10 }, () => store().markUsed(cred.id)));
      expect(results.filter(Boolean)).to.have.length(1);
    });

    it('advanceCounter only raises the counter', async () => {
      const cred = await store().add({ type: 'seed', counter: 2 });
      expect(await store().advanceCounter(cred.id, 5)).to.equal(true);
      expect(await store().advanceCounter(cred.id, 5)).to.equal(false);
      expect(await store().advanceCounter(cred.id, 3)).to.equal(false);
      expect((await store().get(cred.id))!.counter).to.equal(5);
      expect(await store().advanceCounter(cred.id, 2 ** 40)).to.equal(true);
      expect((await store().get(cred.id))!.counter).to.equal(2 ** 40);
    });

    it('10 concurrent advanceCounter to the same value: exactly one wins', async () => {
      const cred = await store().add({ type: 'seed' });
      const results = await Promise.all(Array.from({ length: 10 }, () => store().advanceCounter(cred.id, 7)));
      expect(results.filter(Boolean)).to.have.length(1);
    });

    it('replaceAll replaces the credentials of one type only', async () => {
      const seed = await store().add({ type: 'seed' });
      await store().add({ type: 'code', secret: 'old-1' });
      await store().add({ type: 'code', secret: 'old-2' });
      const fresh = await store().replaceAll('code', [
        { type: 'ignored', secret: 'new-1' },
        { type: 'ignored', secret: 'new-2', label: 'x' },
      ]);
      expect(fresh.map((c) => [c.type, c.secret, c.label])).to.deep.equal([
        ['code', 'new-1', null],
        ['code', 'new-2', 'x'],
      ]);
      expect((await store().list('code')).map((c) => c.secret).sort()).to.deep.equal(['new-1', 'new-2']);
      expect(await store().list('seed')).to.deep.equal([seed]);
      expect(await store().replaceAll('code', [])).to.deep.equal([]);
      expect(await store().list('code')).to.deep.equal([]);
    });

    it('replaceAll is all or nothing: a failure half-way keeps the old set', async () => {
      await store().add({ type: 'code', secret: 'old-1' });
      await store().add({ type: 'code', secret: 'old-2' });
      const circular: Record<string, unknown> = {};
      circular.self = circular;
      let failed = false;
      await store()
        .replaceAll('code', [
          { type: 'code', secret: 'new-1' },
          { type: 'code', data: circular as JsonObject },
        ])
        .catch(() => (failed = true));
      expect(failed).to.equal(true);
      expect((await store().list('code')).map((c) => c.secret).sort()).to.deep.equal(['old-1', 'old-2']);
    });

    it('remove deletes once', async () => {
      const cred = await store().add({ type: 'seed' });
      expect(await store().remove(cred.id)).to.equal(true);
      expect(await store().remove(cred.id)).to.equal(false);
      expect(await store().get(cred.id)).to.equal(null);
    });

    it('update changes secret, data and label', async () => {
      const cred = await store().add({ type: 'seed', secret: 'a', label: 'l', data: { v: 1 } });
      await store().update(cred.id, { secret: 'b', data: { v: 2, nested: { ok: true } } });
      await store().update(cred.id, { label: null });
      await store().update(cred.id, {});
      expect(await store().get(cred.id)).to.deep.include({
        secret: 'b',
        label: null,
        data: { v: 2, nested: { ok: true } },
      });
    });
  });

  describe('events', () => {
    const events = () => services().events;
    const history = () => services().history;

    it('records events and returns them newest first with every field', async () => {
      const userId = randomUUID();
      const t0 = clock.now();
      await events().record({ type: 'verification.failure', userId, method: 'TOTP', ip: '10.0.0.1', reason: 'wrong' });
      clock.advance(10);
      await events().record({
        type: 'verification.success',
        key: 'k1',
        userId,
        method: 'TOTP',
        clientId: 'web',
        ip: '10.0.0.1',
        outcome: 'success',
        data: { userAgent: 'ua', deviceId: 'd1' },
      });
      const recent = await history().recent({ userId });
      expect(recent.map((e) => ({ ...e, id: typeof e.id }))).to.deep.equal([
        {
          id: 'string',
          at: clock.now(),
          count: 1,
          type: 'verification.success',
          key: 'k1',
          userId,
          method: 'TOTP',
          clientId: 'web',
          ip: '10.0.0.1',
          outcome: 'success',
          reason: null,
          data: { userAgent: 'ua', deviceId: 'd1' },
        },
        {
          id: 'string',
          at: t0,
          count: 1,
          type: 'verification.failure',
          key: null,
          userId,
          method: 'TOTP',
          clientId: null,
          ip: '10.0.0.1',
          outcome: null,
          reason: 'wrong',
          data: {},
        },
      ]);
    });

    it('aggregated events: repeats in one window count up one row; count() adds them; a new window starts a row', async () => {
      const key = `agg-${randomUUID()}`;
      const repeat = () => events().record({ type: 'client_auth.failure', key, ip: '10.9.9.9', aggregateSeconds: 60 });
      clock.set(new Date('2026-03-01T11:00:05Z'));
      for (let i = 0; i < 3; i++) await repeat();
      clock.advance(20);
      await repeat();
      const rows = await history().recent({ key });
      expect(rows.map((r) => [r.count, r.at.toISOString()])).to.deep.equal([[4, '2026-03-01T11:00:25.000Z']]);
      expect(await history().count({ key })).to.equal(4);
      clock.advance(60);
      await repeat();
      expect((await history().recent({ key })).map((r) => r.count)).to.deep.equal([1, 4]);
      expect(await history().count({ key })).to.equal(5);
      expect(await history().count({ key, since: new Date('2026-03-01T11:01:00Z') })).to.equal(1);
    });

    it('events of one millisecond list newest first in the order they were written (issue 29)', async () => {
      const userId = randomUUID();
      // Many runs: with a random tiebreak each would pass half the time at best.
      for (let run = 0; run < 20; run++) {
        clock.advance(1000);
        const step = `run-${run}`;
        await events().recordMany!(
          ['a', 'b', 'c'].map((rule) => ({ type: 'fds.verdict', userId, outcome: 'allow', data: { rule, step } })),
        );
        await events().record({ type: 'verification.success', userId, data: { step } });
        await events().record({ type: 'login.stage_completed', userId, data: { step } });
        const rows = await history().recent({ userId, since: clock.now() });
        expect(rows.map((e) => [e.type, e.data.rule ?? null])).to.deep.equal([
          ['login.stage_completed', null],
          ['verification.success', null],
          ['fds.verdict', 'c'],
          ['fds.verdict', 'b'],
          ['fds.verdict', 'a'],
        ]);
        expect(new Set(rows.map((e) => e.at.getTime()))).to.have.property('size', 1);
      }
    });

    it('counts and filters by type, user, method, ip, key and time; limits', async () => {
      const userId = randomUUID();
      const ip = `10.9.${Math.floor(Math.random() * 255)}.${Math.floor(Math.random() * 255)}`;
      const key = unique('dest-');
      await events().record({ type: 'a', userId, method: 'SMS', ip, key });
      clock.advance(60);
      const since = clock.now();
      await events().record({ type: 'b', userId, method: 'SMS', ip });
      clock.advance(60);
      await events().record({ type: 'a', userId, method: 'EMAIL', key });
      expect(await history().count({ userId })).to.equal(3);
      expect(await history().count({ userId, types: ['a'] })).to.equal(2);
      expect(await history().count({ userId, types: ['a', 'b'] })).to.equal(3);
      expect(await history().count({ userId, method: 'SMS' })).to.equal(2);
      expect(await history().count({ ip })).to.equal(2);
      expect(await history().count({ key })).to.equal(2);
      expect(await history().count({ key, types: ['b'] })).to.equal(0);
      expect(await history().count({ userId, since })).to.equal(2);
      expect(await history().count({ userId: randomUUID() })).to.equal(0);
      expect((await history().recent({ userId, since })).map((e) => [e.type, e.method])).to.deep.equal([
        ['a', 'EMAIL'],
        ['b', 'SMS'],
      ]);
      expect((await history().recent({ userId, limit: 1 })).map((e) => e.method)).to.deep.equal(['EMAIL']);
    });
  });

  describe('plugin records', () => {
    const records = (plugin = 'fixture-records') =>
      recordStore(gatehouse.container.cradle.sql, gatehouse.container.cradle.clock, plugin);

    it('puts, gets and replaces a record; namespaces are separate', async () => {
      const key = unique('k-');
      await records().put(key, { n: 1 });
      clock.advance(1);
      await records().put(key, { n: 2, list: [1, 'a'] });
      expect(await records().get(key)).to.deep.equal({
        key,
        data: { n: 2, list: [1, 'a'] },
        createdAt: clock.now(),
        expiresAt: null,
      });
      expect(await records('another-plugin').get(key)).to.equal(null);
      expect(await records().get(unique('missing-'))).to.equal(null);
    });

    it('consume returns the record once; delete reports whether it existed', async () => {
      const key = unique('once-');
      await records().put(key, { v: true });
      expect((await records().consume(key))?.data).to.deep.equal({ v: true });
      expect(await records().consume(key)).to.equal(null);
      expect(await records().get(key)).to.equal(null);
      await records().put(key, { v: 2 });
      expect(await records().delete(key)).to.equal(true);
      expect(await records().delete(key)).to.equal(false);
    });

    it('add inserts only where no live record has the key; an expired one is replaced; 10 racing adds: one wins', async () => {
      const key = unique('add-');
      expect(await records().add(key, { first: true }, { ttlSeconds: 60 })).to.equal(true);
      expect(await records().add(key, { second: true })).to.equal(false);
      expect((await records().get(key))?.data).to.deep.equal({ first: true });
      clock.advance(61);
      expect(await records().add(key, { third: true })).to.equal(true);
      expect((await records().get(key))?.data).to.deep.equal({ third: true });
      const raced = unique('add-race-');
      const wins = await Promise.all(Array.from({ length: 10 }, (_, i) => records().add(raced, { i })));
      expect(wins.filter(Boolean)).to.have.length(1);
    });

    it('10 concurrent consumes: exactly one gets the record', async () => {
      const key = unique('race-');
      await records().put(key, { prize: 1 });
      const results = await Promise.all(Array.from({ length: 10 }, () => records().consume(key)));
      expect(results.filter((r) => r !== null).map((r) => r!.data)).to.deep.equal([{ prize: 1 }]);
    });

    it('lists by prefix, newest first, with a limit; _ and % in the prefix are literal', async () => {
      // One store, as a plugin gets: records written in the same (frozen) millisecond keep their order.
      const store = records();
      const p = unique('list-');
      await store.put(`${p}:a_1`, { i: 1 });
      await store.put(`${p}:b`, { i: 2 });
      await store.put(`${p}:a_2`, { i: 3 });
      clock.advance(1);
      await store.put(`${p}:axx`, { i: 4 });
      await store.put(`${p}%z`, { i: 5 });
      await records('another-plugin').put(`${p}:a_9`, { i: 9 });
      expect((await store.list(`${p}:`)).map((r) => r.data.i)).to.deep.equal([4, 3, 2, 1]);
      expect((await store.list(`${p}:a_`)).map((r) => r.key)).to.deep.equal([`${p}:a_2`, `${p}:a_1`]);
      expect((await store.list(`${p}%`)).map((r) => r.data.i)).to.deep.equal([5]);
      expect((await store.list(`${p}:`, { limit: 2 })).map((r) => r.data.i)).to.deep.equal([4, 3]);
    });

    it('an expired record is invisible to get, consume, delete and list, and can be written again', async () => {
      const p = unique('ttl-');
      await records().put(`${p}:short`, { v: 1 }, { ttlSeconds: 60 });
      await records().put(`${p}:forever`, { v: 2 });
      expect((await records().get(`${p}:short`))?.expiresAt).to.deep.equal(new Date(clock.now().getTime() + 60_000));
      clock.advance(59);
      expect((await records().get(`${p}:short`))?.data).to.deep.equal({ v: 1 });
      clock.advance(1);
      expect(await records().get(`${p}:short`)).to.equal(null);
      expect(await records().consume(`${p}:short`)).to.equal(null);
      expect(await records().delete(`${p}:short`)).to.equal(false);
      expect((await records().list(`${p}:`)).map((r) => r.key)).to.deep.equal([`${p}:forever`]);
      await records().put(`${p}:short`, { v: 3 }, { ttlSeconds: 60 });
      expect((await records().get(`${p}:short`))?.data).to.deep.equal({ v: 3 });
    });
  });
}

describe('storage', function () {
  this.timeout(20_000);

  describe('SQLite file', () => {
    let dir: string;
    before(() => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'gh-sqlite-'));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));
    storageSuite('sqlite', () => `sqlite:${path.join(dir, 'nested', 'gatehouse.db')}`);

    it('uses WAL and keeps data across a restart without re-running migrations', async () => {
      const config = testConfig([], { database: { url: `sqlite:${path.join(dir, 'nested', 'gatehouse.db')}` } });
      const first = await buildApp(config);
      const user = await first.container.cradle.users.create({ username: unique('persist-') });
      const [mode] = await first.container.cradle.sql.select<{ journal_mode: string }>('PRAGMA journal_mode');
      await first.close();
      expect(mode).to.deep.equal({ journal_mode: 'wal' });
      const second = await buildApp(config, { migrate: false });
      try {
        expect(await pendingMigrations(second.container.cradle.sequelize, second.logger)).to.deep.equal([]);
        expect(await second.container.cradle.users.findById(user.id)).to.deep.equal(user);
      } finally {
        await second.close();
      }
    });
  });

  describe('SQLite in memory', () => {
    storageSuite('sqlite', () => 'sqlite::memory:');
  });

  describe('PostgreSQL', () => {
    const db = withPostgresDatabase();
    storageSuite('postgres', () => db.url);
  });
});

describe('migration 006: user identifiers from existing users', () => {
  it("copies every identifier in lower case; where two collide, the username keeps it (the lookup's precedence)", async () => {
    const gatehouse = await buildApp(testConfig([], { database: { url: 'sqlite::memory:' } }), { migrate: false });
    try {
      const { sequelize, sql } = gatehouse.container.cradle;
      const qi = sequelize.getQueryInterface();
      const before = MIGRATIONS.slice(
        0,
        MIGRATIONS.findIndex((m) => m.name === '006-user-identifiers'),
      );
      for (const m of before) await m.up({ name: m.name, context: qi });
      const insert = (id: string, username: string, email: string | null, at: string) =>
        sql.exec(
          `INSERT INTO users (id, username, email, phone, status, created_at, updated_at)
           VALUES (:id, :username, :email, NULL, 'active', :at, :at)`,
          { id, username, email, at },
        );
      await insert('u-old', 'Old', 'shared@example.com', '2025-01-01 00:00:00.000 +00:00');
      await insert('u-new', 'shared@example.com', null, '2025-06-01 00:00:00.000 +00:00');
      const m006 = MIGRATIONS.find((m) => m.name === '006-user-identifiers')!;
      await m006.up({ name: m006.name, context: qi });
      const rows = await sql.select<{ value: string; user_id: string }>(
        'SELECT value, user_id FROM user_identifiers ORDER BY value',
      );
      expect(rows).to.deep.equal([
        { value: 'old', user_id: 'u-old' },
        { value: 'shared@example.com', user_id: 'u-new' },
      ]);
    } finally {
      await gatehouse.close();
    }
  });
});
