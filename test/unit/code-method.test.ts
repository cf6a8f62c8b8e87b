import { expect } from 'chai';
import {
  codeMethodOptions,
  createCodeMethod,
  maskEmail,
  maskPhone,
  normalizeEmail,
  normalizePhone,
  type AuthMethod,
  type CodeMethodSpec,
  type DeliveryChannel,
  type JsonObject,
  type OutboundMessage,
} from '@gatehouse-auth/core';
import {
  CapturingChannel,
  enrollmentContext,
  fakeServices,
  fakeUser,
  initiateContext,
  verifyContext,
  type FakeServices,
} from '@gatehouse-auth/testing';

const METHOD = 'TESTCODE';

/** A generic phone-based spec, as a method plugin would write it. */
const spec: CodeMethodSpec = {
  id: METHOD,
  kind: 'sms',
  amr: ['sms'],
  addressOf: (user) => user.phone,
  normalizeAddress: normalizePhone,
  mask: maskPhone,
  render: (code, minutes) => ({ text: `Code ${code}, valid ${minutes} min.` }),
  page: { label: 'Test code', codeLabel: 'The test code', send: 'Send code', sendAgain: 'Send again' },
};

class FailingChannel implements DeliveryChannel {
  readonly id = 'broken';
  readonly kinds: DeliveryChannel['kinds'] = ['sms'];
  attempts = 0;
  readonly texts: string[] = [];
  async send(message: OutboundMessage): Promise<void> {
    this.attempts++;
    this.texts.push(message.text);
    throw new Error(`provider rejected: ${message.text}`);
  }
}

function setup(rawOptions: Record<string, unknown> = {}) {
  const channel = new CapturingChannel('sms-out');
  const services = fakeServices({ channels: [channel] });
  const options = codeMethodOptions.parse({ channel: 'sms-out', ...rawOptions });
  const method = createCodeMethod(spec, services, options);
  return { channel, services, method };
}

/** The code in the last message: the first run of 6–10 digits. */
function lastCode(channel: CapturingChannel): string {
  const text = channel.sent.at(-1)?.text ?? '';
  const match = /\b(\d{6,10})\b/.exec(text);
  if (!match?.[1]) throw new Error(`no code in ${JSON.stringify(text)}`);
  return match[1];
}

async function initiateOk(method: AuthMethod, services: FakeServices, user = fakeUser(), mediumId?: string) {
  const outcome = await method.initiate(
    initiateContext({ services, user, method: METHOD, mediumId: mediumId ?? null }),
  );
  if (!outcome.ok) throw new Error(`initiate failed: ${outcome.code}`);
  await services.settle(); // the message goes out after the answer
  return { user, state: outcome.state as JsonObject, response: outcome.response as JsonObject };
}

describe('createCodeMethod', () => {
  describe('options', () => {
    it('applies the defaults and requires a channel', () => {
      expect(codeMethodOptions.parse({ channel: 'c' })).to.deep.equal({
        channel: 'c',
        code_length: 6,
        code_ttl: 300,
        max_sends: 5,
        send_window_seconds: 900,
        primary_address: 'any',
      });
      expect(codeMethodOptions.safeParse({}).success).to.equal(false);
      expect(codeMethodOptions.safeParse({ channel: 'c', code_length: 5 }).success).to.equal(false);
      expect(codeMethodOptions.safeParse({ channel: 'c', code_length: 11 }).success).to.equal(false);
      expect(codeMethodOptions.safeParse({ channel: 'c', message: 'no placeholder' }).success).to.equal(false);
    });

    it('describes itself with the spec id, amr and the pass_code field', () => {
      const { method } = setup();
      expect(method.id).to.equal(METHOD);
      expect(method.amr).to.deep.equal(['sms']);
      expect(method.verifyFields).to.deep.equal(['pass_code']);
    });
  });

  describe('initiate and verify', () => {
    it('sends a code through the channel and answers with the masked destination', async () => {
      const { method, services, channel } = setup();
      const user = fakeUser({ phone: '+15551230000' });
      const { state, response } = await initiateOk(method, services, user);

      expect(response).to.deep.equal({ medium_text: '+1******0000' });
      expect(channel.sent).to.have.length(1);
      const message = channel.sent[0]!;
      expect(message.kind).to.equal('sms');
      expect(message.to).to.equal('+15551230000');
      expect(message.text).to.match(/^Code \d{6}, valid 5 min\.$/);

      const code = lastCode(channel);
      expect(JSON.stringify(state)).not.to.include(code);
      expect(state['medium']).to.equal('+1******0000');
      expect(state['code_expires_at']).to.equal(services.clock.now().getTime() + 300_000);

      const events = services.eventLog.events.filter((e) => e.type === 'delivery.sent');
      expect(events).to.have.length(1);
      expect(events[0]).to.include({
        key: services.crypto.sha256('+15551230000'),
        userId: user.id,
        method: METHOD,
        clientId: 'test-client',
        ip: '203.0.113.10',
      });
    });

    it('accepts the right code', async () => {
      const { method, services, channel } = setup();
      const { user, state } = await initiateOk(method, services);
      const outcome = await method.verify(
        verifyContext({ services, user, method: METHOD, state, fields: { pass_code: lastCode(channel) } }),
      );
      expect(outcome).to.deep.equal({ ok: true });
    });

    it('refuses a wrong code', async () => {
      const { method, services, channel } = setup();
      const { user, state } = await initiateOk(method, services);
      const right = lastCode(channel);
      const wrong = right === '000000' ? '000001' : '000000';
      const outcome = await method.verify(
        verifyContext({ services, user, method: METHOD, state, fields: { pass_code: wrong } }),
      );
      expect(outcome).to.deep.equal({ ok: false, reason: 'mismatch' });
    });

    it('refuses the right code once it expired', async () => {
      const { method, services, channel } = setup({ code_ttl: 120 });
      const { user, state } = await initiateOk(method, services);
      const pass_code = lastCode(channel);

      services.clock.advance(120);
      const atExpiry = await method.verify(
        verifyContext({ services, user, method: METHOD, state, fields: { pass_code } }),
      );
      expect(atExpiry).to.deep.equal({ ok: true });

      services.clock.advance(1);
      const after = await method.verify(
        verifyContext({ services, user, method: METHOD, state, fields: { pass_code } }),
      );
      expect(after).to.deep.equal({ ok: false, reason: 'expired' });
    });

    it('never lets the code outlive the exchange', async () => {
      const { method, services } = setup({ code_ttl: 600 });
      const user = fakeUser();
      const outcome = await method.initiate(initiateContext({ services, user, method: METHOD, ttlSeconds: 90 }));
      await services.settle();
      expect(outcome.ok).to.equal(true);
      const state = (outcome as { state: JsonObject }).state;
      expect(state['code_expires_at']).to.equal(services.clock.now().getTime() + 90_000);
    });

    it('refuses malformed codes', async () => {
      const { method, services, channel } = setup();
      const { user, state } = await initiateOk(method, services);
      const right = lastCode(channel);
      for (const pass_code of [right.slice(0, 5), `${right}0`, ` ${right.slice(1)}`, 'abcdef', '']) {
        const outcome = await method.verify(
          verifyContext({ services, user, method: METHOD, state, fields: { pass_code } }),
        );
        expect(outcome, pass_code).to.deep.equal({ ok: false, reason: 'malformed' });
      }
    });

    it('uses code_length digits', async () => {
      const { method, services, channel } = setup({ code_length: 8 });
      const { user, state } = await initiateOk(method, services);
      const code = lastCode(channel);
      expect(code).to.match(/^\d{8}$/);
      const outcome = await method.verify(
        verifyContext({ services, user, method: METHOD, state, fields: { pass_code: code } }),
      );
      expect(outcome).to.deep.equal({ ok: true });
    });

    it('refuses a code that was sent for another exchange or another user', async () => {
      const { method, services, channel } = setup();
      const first = await initiateOk(method, services, fakeUser({ phone: '+15551230000' }));
      const firstCode = lastCode(channel);
      // Another exchange (here of another user) whose code differs from the first one.
      let second = await initiateOk(method, services, fakeUser({ phone: '+15551239999' }));
      while (lastCode(channel) === firstCode) second = await initiateOk(method, services, second.user);
      const secondCode = lastCode(channel);

      const crossed = await method.verify(
        verifyContext({
          services,
          user: first.user,
          method: METHOD,
          state: first.state,
          fields: { pass_code: secondCode },
        }),
      );
      expect(crossed).to.deep.equal({ ok: false, reason: 'mismatch' });
      const own = await method.verify(
        verifyContext({
          services,
          user: first.user,
          method: METHOD,
          state: first.state,
          fields: { pass_code: firstCode },
        }),
      );
      expect(own).to.deep.equal({ ok: true });
    });

    it('fails without a code in the state', async () => {
      const { method, services } = setup();
      const outcome = await method.verify(
        verifyContext({ services, user: fakeUser(), method: METHOD, state: {}, fields: { pass_code: '123456' } }),
      );
      expect(outcome).to.deep.equal({ ok: false, reason: 'no_code' });
    });

    it('uses a configured message template', async () => {
      const { method, services, channel } = setup({ message: 'Gatehouse: {code} ({minutes} min)' });
      await initiateOk(method, services);
      expect(channel.sent[0]!.text).to.match(/^Gatehouse: \d{6} \(5 min\)$/);
    });
  });

  describe('throttling', () => {
    it('answers 429 once max_sends codes went to one destination within the window', async () => {
      const { method, services, channel } = setup({ max_sends: 3, send_window_seconds: 600 });
      const phone = '+15551230000';
      for (let i = 0; i < 3; i++) {
        await initiateOk(method, services, fakeUser({ phone }));
        services.clock.advance(100);
      }

      // The first of the three leaves the window 600 s after it was sent: 300 s from now.
      const user = fakeUser({ phone });
      const refused = await method.initiate(initiateContext({ services, user, method: METHOD }));
      expect(refused).to.deep.include({ ok: false, code: 'TOO_MANY_SENDS', status: 429, retryAfter: 300 });
      expect(channel.sent).to.have.length(3);

      services.clock.advance(299);
      const still = await method.initiate(initiateContext({ services, user, method: METHOD }));
      expect(still).to.deep.include({ ok: false, code: 'TOO_MANY_SENDS', retryAfter: 1 });
      services.clock.advance(1);
      await initiateOk(method, services, user);
      expect(channel.sent).to.have.length(4);
    });

    it('answers 429 once max_sends codes went to one user, whatever the destination', async () => {
      const { method, services } = setup({ max_sends: 2 });
      const user = fakeUser({ phone: '+15551230000' });
      const other = await services
        .credentials(user.id, METHOD)
        .add({ type: 'medium', data: { address: '+4930123456' } });
      await initiateOk(method, services, user);
      await initiateOk(method, services, user, other.id);
      const refused = await method.initiate(initiateContext({ services, user, method: METHOD, mediumId: other.id }));
      expect(refused).to.deep.include({ ok: false, code: 'TOO_MANY_SENDS', status: 429 });
    });
  });

  describe('delivery', () => {
    it('answers before the provider does: the initiation resolves while the send is still pending', async () => {
      let release!: () => void;
      const held: OutboundMessage[] = [];
      const slow: DeliveryChannel = {
        id: 'slow',
        kinds: ['sms'],
        send: (message) =>
          new Promise<void>((resolve) => {
            held.push(message);
            release = resolve;
          }),
      };
      const services = fakeServices({ channels: [slow] });
      const method = createCodeMethod(spec, services, codeMethodOptions.parse({ channel: 'slow' }));
      const outcome = await method.initiate(initiateContext({ services, user: fakeUser(), method: METHOD }));
      expect(outcome).to.deep.include({ ok: true });
      await new Promise((resolve) => setImmediate(resolve));
      expect(held).to.have.length(1); // handed to the provider, which has not answered yet
      release();
      await services.settle();
      expect(services.eventLog.events.map((e) => e.type)).to.include('delivery.done');
    });

    it('a failed send is recorded (delivery.failed) with the code blanked out, never logged', async () => {
      const broken = new FailingChannel();
      const services = fakeServices({ channels: [broken] });
      const method = createCodeMethod(spec, services, codeMethodOptions.parse({ channel: 'broken' }));
      const outcome = await method.initiate(initiateContext({ services, user: fakeUser(), method: METHOD }));
      expect(outcome).to.deep.include({ ok: true });
      await services.settle();
      expect(broken.attempts).to.equal(1);
      const failed = services.eventLog.events.find((e) => e.type === 'delivery.failed');
      expect(failed?.reason).to.equal('provider rejected: Code [code], valid 5 min.');
      const code = /\d{6}/.exec(broken.texts[0]!)![0];
      expect(JSON.stringify(services.eventLog.events)).not.to.include(code);
    });

    it('enrollment sends at once: a failure answers 502, records no send and keeps the code out of the logs', async () => {
      const broken = new FailingChannel();
      const services = fakeServices({ channels: [broken] });
      const method = createCodeMethod(spec, services, codeMethodOptions.parse({ channel: 'broken' }));
      const logged: unknown[] = [];
      const ctx = enrollmentContext({ services, user: fakeUser(), method: METHOD, body: { phone: '+15551239999' } });
      ctx.logger = { warn: (...args: unknown[]) => void logged.push(args) } as unknown as typeof ctx.logger;
      const outcome = await method.enrollment!.initiate(ctx);
      expect(outcome).to.deep.include({ ok: false, code: 'DELIVERY_FAILED', status: 502 });
      expect(broken.attempts).to.equal(1);
      expect(services.eventLog.events).to.have.length(0);
      expect(logged).to.have.length(1);
      expect(JSON.stringify(logged)).to.include('provider rejected: Code [code], valid 5 min.');
      expect(JSON.stringify(logged)).not.to.match(/\d{6}/);
    });

    it('answers 502 at once when the channel does not exist', async () => {
      const services = fakeServices();
      const method = createCodeMethod(spec, services, codeMethodOptions.parse({ channel: 'missing' }));
      const outcome = await method.initiate(initiateContext({ services, user: fakeUser(), method: METHOD }));
      expect(outcome).to.deep.include({ ok: false, code: 'DELIVERY_FAILED', status: 502 });
    });
  });

  describe('destinations', () => {
    it('sends to the medium named by medium_id', async () => {
      const { method, services, channel } = setup();
      const user = fakeUser({ phone: '+15551230000' });
      const medium = await services
        .credentials(user.id, METHOD)
        .add({ type: 'medium', data: { address: '+4930123456' } });
      const { response } = await initiateOk(method, services, user, medium.id);
      expect(channel.sent[0]!.to).to.equal('+4930123456');
      expect(response).to.deep.equal({ medium_text: '+4*****3456' });
    });

    it('answers 404 for an unknown medium_id, or one that is not a medium', async () => {
      const { method, services, channel } = setup();
      const user = fakeUser();
      const notMedium = await services
        .credentials(user.id, METHOD)
        .add({ type: 'other', data: { address: '+4930123456' } });
      const stranger = fakeUser();
      const foreign = await services
        .credentials(stranger.id, METHOD)
        .add({ type: 'medium', data: { address: '+4930999999' } });
      for (const mediumId of ['no-such-id', notMedium.id, foreign.id]) {
        const outcome = await method.initiate(initiateContext({ services, user, method: METHOD, mediumId }));
        await services.settle();
        expect(outcome, mediumId).to.deep.include({ ok: false, code: 'MEDIUM_NOT_FOUND', status: 404 });
      }
      expect(channel.sent).to.have.length(0);
    });

    it('falls back to the first enrolled medium when the user record has no address', async () => {
      const { method, services, channel } = setup();
      const user = fakeUser({ phone: null });
      await services.credentials(user.id, METHOD).add({ type: 'medium', data: { address: '+4930123456' } });
      await services.credentials(user.id, METHOD).add({ type: 'medium', data: { address: '+4930654321' } });
      expect(await method.isEnrolled(initiateContext({ services, user, method: METHOD }))).to.equal(true);
      await initiateOk(method, services, user);
      expect(channel.sent[0]!.to).to.equal('+4930123456');
    });

    it('normalises the address of the user record', async () => {
      const { method, services, channel } = setup();
      await initiateOk(method, services, fakeUser({ phone: '+1 (555) 123-0000' }));
      expect(channel.sent[0]!.to).to.equal('+15551230000');
    });

    it('answers 400 when there is nowhere to send', async () => {
      const { method, services, channel } = setup();
      const user = fakeUser({ phone: null });
      const ctx = initiateContext({ services, user, method: METHOD });
      expect(await method.isEnrolled(ctx)).to.equal(false);
      expect(await method.initiate(ctx)).to.deep.include({ ok: false, code: 'NO_DESTINATION', status: 400 });
      expect(channel.sent).to.have.length(0);
    });
  });

  describe('enrollment', () => {
    it('binds a new destination once its code is confirmed', async () => {
      const { method, services, channel } = setup();
      const user = fakeUser({ phone: null });
      const enrollment = method.enrollment!;

      const started = await enrollment.initiate(
        enrollmentContext({ services, user, method: METHOD, body: { phone: '+49 30 123456' } }),
      );
      expect(started.ok).to.equal(true);
      if (!started.ok) return;
      expect(started.response).to.deep.equal({ medium_text: '+4*****3456' });
      expect(channel.sent[0]!.to).to.equal('+4930123456');
      const pending = started.pending!;
      expect(pending['address']).to.equal('+4930123456');
      const code = lastCode(channel);
      expect(JSON.stringify(pending)).not.to.include(code);

      const wrong = code === '000000' ? '000001' : '000000';
      const refused = await enrollment.verify!(
        enrollmentContext({ services, user, method: METHOD, pending, body: { pass_code: wrong } }),
      );
      expect(refused).to.deep.include({ ok: false, code: 'VERIFICATION_FAILED', status: 401 });
      expect(await services.credentials(user.id, METHOD).list()).to.have.length(0);

      const confirmed = await enrollment.verify!(
        enrollmentContext({ services, user, method: METHOD, pending, body: { pass_code: code } }),
      );
      expect(confirmed.ok).to.equal(true);
      if (!confirmed.ok) return;
      expect(confirmed.done).to.equal(true);
      const stored = await services.credentials(user.id, METHOD).list('medium');
      expect(stored).to.have.length(1);
      expect(stored[0]).to.deep.include({ label: '+4*****3456', data: { address: '+4930123456' } });
      expect(confirmed.response).to.deep.equal({ medium_id: stored[0]!.id, medium_text: '+4*****3456' });

      // The new medium now works for login.
      const login = await initiateOk(method, services, user, stored[0]!.id);
      expect(login.response).to.deep.equal({ medium_text: '+4*****3456' });
    });

    it('refuses an expired enrollment code', async () => {
      const { method, services, channel } = setup();
      const user = fakeUser();
      const started = await method.enrollment!.initiate(
        enrollmentContext({ services, user, method: METHOD, body: { address: '+4930123456' } }),
      );
      if (!started.ok) throw new Error('initiate failed');
      services.clock.advance(301);
      const outcome = await method.enrollment!.verify!(
        enrollmentContext({
          services,
          user,
          method: METHOD,
          pending: started.pending!,
          body: { pass_code: lastCode(channel) },
        }),
      );
      expect(outcome).to.deep.include({ ok: false, code: 'VERIFICATION_FAILED', status: 401 });
    });

    it('refuses an invalid or missing address', async () => {
      const { method, services, channel } = setup();
      for (const body of [{}, { phone: '5551230000' }, { phone: 12345 }, { address: '+0123456789' }]) {
        const outcome = await method.enrollment!.initiate(
          enrollmentContext({ services, user: fakeUser(), method: METHOD, body }),
        );
        expect(outcome, JSON.stringify(body)).to.deep.include({ ok: false, code: 'INVALID_FIELD', status: 400 });
      }
      expect(channel.sent).to.have.length(0);
    });

    it('throttles enrollment sends too', async () => {
      const { method, services } = setup({ max_sends: 1 });
      const user = fakeUser();
      const body = { phone: '+4930123456' };
      const first = await method.enrollment!.initiate(enrollmentContext({ services, user, method: METHOD, body }));
      expect(first.ok).to.equal(true);
      const second = await method.enrollment!.initiate(enrollmentContext({ services, user, method: METHOD, body }));
      expect(second).to.deep.include({ ok: false, code: 'TOO_MANY_SENDS', status: 429 });
    });

    it('refuses a verification without a pending setup', async () => {
      const { method, services } = setup();
      const outcome = await method.enrollment!.verify!(
        enrollmentContext({ services, user: fakeUser(), method: METHOD, pending: null, body: { pass_code: '123456' } }),
      );
      expect(outcome).to.deep.include({ ok: false, code: 'VERIFICATION_FAILED', status: 401 });
    });
  });
});

describe('destination helpers', () => {
  it('normalizePhone keeps E.164 numbers only', () => {
    expect(normalizePhone('+1 (555) 123-0000')).to.equal('+15551230000');
    expect(normalizePhone(' +4930123456 ')).to.equal('+4930123456');
    expect(normalizePhone('5551230000')).to.equal(null);
    expect(normalizePhone('+0555123000')).to.equal(null);
    expect(normalizePhone('+12345')).to.equal(null);
    expect(normalizePhone('+1234567890123456')).to.equal(null);
    expect(normalizePhone('+1555abc0000')).to.equal(null);
  });

  it('normalizeEmail trims, lower-cases and checks the shape', () => {
    expect(normalizeEmail('  Alice@Example.COM ')).to.equal('alice@example.com');
    expect(normalizeEmail('alice@localhost')).to.equal(null);
    expect(normalizeEmail('alice@@example.com')).to.equal(null);
    expect(normalizeEmail('a@b@example.com')).to.equal(null);
    expect(normalizeEmail('@example.com')).to.equal(null);
    expect(normalizeEmail('alice@example.')).to.equal(null);
    expect(normalizeEmail('al ice@example.com')).to.equal(null);
  });

  it('maskPhone keeps the first digit of the country code and the last four', () => {
    expect(maskPhone('+15551230000')).to.equal('+1******0000');
    expect(maskPhone('+447911123456')).to.equal('+4*******3456');
  });

  it('maskEmail keeps the first letter and the domain', () => {
    expect(maskEmail('alice@example.com')).to.equal('a***@example.com');
    expect(maskEmail('b@example.com')).to.equal('b***@example.com');
  });
});
