import { expect } from 'chai';
import type { JsonObject } from '@gatehouse-auth/core';
import {
  CapturingChannel,
  fakeServices,
  fakeUser,
  initiateContext,
  registerWithFakes,
  verifyContext,
} from '@gatehouse-auth/testing';
import plugin from '../src/index.js';

describe('@gatehouse-auth/method-sms', () => {
  async function setup() {
    const channel = new CapturingChannel('sms-gateway', ['sms']);
    const services = fakeServices({ channels: [channel] });
    const { methods } = await registerWithFakes(plugin, { channel: 'sms-gateway' }, services);
    return { channel, services, methods };
  }

  it('registers the SMS method', async () => {
    const { methods } = await setup();
    expect(methods).to.have.length(1);
    expect(methods[0]).to.deep.include({ id: 'SMS', amr: ['sms'], verifyFields: ['pass_code'] });
  });

  it('requires a channel in its options', async () => {
    let error: unknown;
    await registerWithFakes(plugin, {}).catch((e: unknown) => (error = e));
    expect(error).to.be.instanceOf(Error);
    expect(String(error)).to.include('channel');
  });

  it('texts the code to the user phone and answers with a masked number', async () => {
    const { channel, services, methods } = await setup();
    const method = methods[0]!;
    const user = fakeUser({ phone: '+15551230000' });
    const outcome = await method.initiate(initiateContext({ services, user, method: 'SMS' }));
    await services.settle();
    expect(outcome).to.deep.include({ ok: true, response: { medium_text: '+1******0000' } });

    expect(channel.sent).to.have.length(1);
    const message = channel.sent[0]!;
    expect(message).to.deep.include({ kind: 'sms', to: '+15551230000' });
    expect(message.subject).to.equal(undefined);
    const match = /^Your verification code is (\d{6})\. It expires in 5 minutes\.$/.exec(message.text);
    expect(match, message.text).not.to.equal(null);

    const state = (outcome as { state: JsonObject }).state;
    const verified = await method.verify(
      verifyContext({ services, user, method: 'SMS', state, fields: { pass_code: match![1]! } }),
    );
    expect(verified).to.deep.equal({ ok: true });
  });
});
