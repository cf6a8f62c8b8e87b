import { expect } from 'chai';
import express from 'express';
import { pino } from 'pino';
import request from 'supertest';
import { ApiError, type OutboundMessage } from '@gatehouse-auth/core';
import { fakeServices, registerWithFakes, type Registered } from '@gatehouse-auth/testing';
import plugin, { latestMessage, OUTBOX_ROUTE_PATH } from '../src/index.js';

const sms = (to: string, text: string): OutboundMessage => ({ kind: 'sms', to, text });

function onlyChannel(registered: Registered) {
  expect(registered.channels).to.have.length(1);
  return registered.channels[0]!;
}

/** An app that mounts the plugin's routes and renders ApiError the way the core does. */
function appFor(registered: Registered): express.Express {
  const app = express();
  for (const route of registered.routes) app.use(route.path, route.router);
  app.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    if (err instanceof ApiError) res.status(err.status).json(err.body('test-request'));
    else res.status(500).json({ fault: String(err) });
  });
  return app;
}

describe('@gatehouse-auth/channel-outbox', () => {
  describe('options', () => {
    it('registers one channel with the defaults and no route', async () => {
      const registered = await registerWithFakes(plugin);
      const channel = onlyChannel(registered);
      expect(channel.id).to.equal('outbox');
      expect(channel.kinds).to.deep.equal(['sms', 'email', 'voice', 'push']);
      expect(registered.routes).to.deep.equal([]);
      expect(plugin.options!.parse(undefined)).to.deep.equal({
        id: 'outbox',
        kinds: ['sms', 'email', 'voice', 'push'],
        ttl_seconds: 86400,
        expose_route: false,
      });
    });

    it('takes a custom id and kinds', async () => {
      const channel = onlyChannel(await registerWithFakes(plugin, { id: 'dev-mail', kinds: ['email'] }));
      expect(channel.id).to.equal('dev-mail');
      expect(channel.kinds).to.deep.equal(['email']);
    });

    it('refuses invalid options', () => {
      const schema = plugin.options!;
      expect(schema.safeParse({ kinds: [] }).success).to.equal(false);
      expect(schema.safeParse({ kinds: ['fax'] }).success).to.equal(false);
      expect(schema.safeParse({ ttl_seconds: 0 }).success).to.equal(false);
      expect(schema.safeParse({ expose_route: 'yes' }).success).to.equal(false);
      expect(schema.safeParse({ exposeRoute: true }).success).to.equal(false);
    });
  });

  describe('send', () => {
    it('stores the message with sent_at and the ttl', async () => {
      const services = fakeServices();
      const registered = await registerWithFakes(plugin, { ttl_seconds: 600 }, services);
      const now = services.clock.now();
      await onlyChannel(registered).send({
        kind: 'email',
        to: 'alice@example.test',
        subject: 'Your code',
        text: 'Code: 123456',
        data: { code_length: 6 },
      });

      const records = await registered.records.list('msg:alice@example.test:');
      expect(records).to.have.length(1);
      const record = records[0]!;
      expect(record.key).to.match(/^msg:alice@example\.test:\d{15}-[A-Za-z0-9_-]+$/);
      expect(record.data).to.deep.equal({
        kind: 'email',
        to: 'alice@example.test',
        subject: 'Your code',
        text: 'Code: 123456',
        data: { code_length: 6 },
        sent_at: now.toISOString(),
      });
      expect(record.expiresAt?.getTime()).to.equal(now.getTime() + 600_000);
    });

    it('lists messages for one address newest first, apart from other addresses', async () => {
      const services = fakeServices();
      const registered = await registerWithFakes(plugin, {}, services);
      const channel = onlyChannel(registered);
      await channel.send(sms('+15551230000', 'first'));
      services.clock.advance(1);
      await channel.send(sms('+15559990000', 'someone else'));
      await channel.send(sms('+15551230000', 'second'));
      // Same clock millisecond: the random suffix keeps both.
      await channel.send(sms('+15551230000', 'third'));

      const texts = (await registered.records.list('msg:+15551230000:')).map((r) => r.data.text);
      expect(texts).to.deep.equal(['third', 'second', 'first']);
      const other = (await registered.records.list('msg:+15559990000:')).map((r) => r.data.text);
      expect(other).to.deep.equal(['someone else']);
    });

    it('forgets messages after ttl_seconds', async () => {
      const services = fakeServices();
      const registered = await registerWithFakes(plugin, { ttl_seconds: 60 }, services);
      await onlyChannel(registered).send(sms('+15551230000', 'Code: 111111'));
      services.clock.advance(59);
      expect(await registered.records.list('msg:+15551230000:')).to.have.length(1);
      services.clock.advance(1);
      expect(await registered.records.list('msg:+15551230000:')).to.deep.equal([]);
    });

    it('refuses a kind it was not configured for', async () => {
      const registered = await registerWithFakes(plugin, { kinds: ['email'] });
      let error: unknown;
      await onlyChannel(registered)
        .send(sms('+15551230000', 'Code: 1'))
        .catch((err: unknown) => (error = err));
      expect(error).to.be.instanceOf(Error);
      expect((error as Error).message).to.equal('outbox channel "outbox" does not take sms');
      expect(registered.records.records.size).to.equal(0);
    });

    it('latestMessage matches the address exactly, not by prefix', async () => {
      const registered = await registerWithFakes(plugin);
      const channel = onlyChannel(registered);
      await channel.send({ kind: 'push', to: 'device', text: 'mine' });
      await channel.send({ kind: 'push', to: 'device:2', text: 'not mine' });
      expect((await latestMessage(registered.records, 'device'))?.text).to.equal('mine');
      expect((await latestMessage(registered.records, 'device:2'))?.text).to.equal('not mine');
      expect(await latestMessage(registered.records, 'nobody')).to.equal(null);
    });
  });

  describe('GET /dev/outbox/latest', () => {
    it('is mounted only with expose_route, and registering warns', async () => {
      const lines: string[] = [];
      const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
      const registered = await registerWithFakes(plugin, { expose_route: false });
      await plugin.register({ ...registered.api, logger }, plugin.options!.parse({ expose_route: true }));
      expect(registered.routes.map((r) => r.path)).to.deep.equal([OUTBOX_ROUTE_PATH]);
      expect(lines).to.have.length(1);
      const entry = JSON.parse(lines[0]!) as { level: number; msg: string; path: string };
      expect(entry.level).to.equal(40);
      expect(entry.path).to.equal('/dev/outbox/latest');
      expect(entry.msg).to.contain('never enable it in production');
    });

    it('answers the newest message for the address', async () => {
      const services = fakeServices();
      const registered = await registerWithFakes(plugin, { expose_route: true }, services);
      const channel = onlyChannel(registered);
      await channel.send({ kind: 'email', to: 'bob@example.test', subject: 'Old', text: 'Code: 000000' });
      services.clock.advance(5);
      await channel.send({ kind: 'email', to: 'bob@example.test', subject: 'New', text: 'Code: 424242' });

      const res = await request(appFor(registered)).get('/dev/outbox/latest').query({ to: 'bob@example.test' });
      expect(res.status).to.equal(200);
      expect(res.headers['cache-control']).to.equal('no-store');
      expect(res.body).to.deep.equal({
        success: true,
        status: 200,
        data: {
          kind: 'email',
          to: 'bob@example.test',
          subject: 'New',
          text: 'Code: 424242',
          data: null,
          sent_at: services.clock.now().toISOString(),
        },
      });
    });

    it('answers 404 NO_MESSAGE for an address with no message', async () => {
      const registered = await registerWithFakes(plugin, { expose_route: true });
      const res = await request(appFor(registered)).get('/dev/outbox/latest').query({ to: '+15550000000' });
      expect(res.status).to.equal(404);
      expect(res.body).to.deep.equal({
        success: false,
        status: 404,
        error: {
          code: 'NO_MESSAGE',
          error: 'no message stored for this address',
          type: 'NotFound',
          status: 404,
          referenceNumber: 'test-request',
        },
      });
    });

    it('answers 400 FIELD_MISSING without "to"', async () => {
      const registered = await registerWithFakes(plugin, { expose_route: true });
      for (const path of ['/dev/outbox/latest', '/dev/outbox/latest?to=', '/dev/outbox/latest?to=a&to=b']) {
        const res = await request(appFor(registered)).get(path);
        expect(res.status, path).to.equal(400);
        expect(res.body.error.code, path).to.equal('FIELD_MISSING');
      }
    });
  });

  it('refuses expose_route when NODE_ENV=production (the route shows one-time codes)', async () => {
    const before = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      const outcome = await registerWithFakes(plugin, { expose_route: true }).then(
        () => null,
        (err: unknown) => err as Error,
      );
      expect(outcome?.message).to.match(/refused when NODE_ENV=production/);
    } finally {
      if (before === undefined) delete process.env.NODE_ENV;
      else process.env.NODE_ENV = before;
    }
  });
});
