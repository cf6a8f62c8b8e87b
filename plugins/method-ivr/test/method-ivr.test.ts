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
import plugin, { spellDigits } from '../src/index.js';

describe('@gatehouse-auth/method-ivr', () => {
  async function setup(options: Record<string, unknown> = {}) {
    const channel = new CapturingChannel('voice-gateway', ['voice']);
    const services = fakeServices({ channels: [channel] });
    const { methods } = await registerWithFakes(plugin, { channel: 'voice-gateway', ...options }, services);
    return { channel, services, methods };
  }

  it('registers the IVR method with amr tel', async () => {
    const { methods } = await setup();
    expect(methods).to.have.length(1);
    expect(methods[0]).to.deep.include({ id: 'IVR', amr: ['tel'], verifyFields: ['pass_code'] });
  });

  it('spells digits one by one', () => {
    expect(spellDigits('123456')).to.equal('1, 2, 3, 4, 5, 6');
  });

  it('calls the user phone, spells the code twice and answers with a masked number', async () => {
    const { channel, services, methods } = await setup();
    const method = methods[0]!;
    const user = fakeUser({ phone: '+447911123456' });
    const outcome = await method.initiate(initiateContext({ services, user, method: 'IVR' }));
    await services.settle();
    expect(outcome).to.deep.include({ ok: true, response: { medium_text: '+4*******3456' } });

    expect(channel.sent).to.have.length(1);
    const message = channel.sent[0]!;
    expect(message).to.deep.include({ kind: 'voice', to: '+447911123456' });
    const match = /^Your code is ((?:\d, ){5}\d)\. Again: ((?:\d, ){5}\d)\.$/.exec(message.text);
    expect(match, message.text).not.to.equal(null);
    expect(match![2]).to.equal(match![1]);

    const state = (outcome as { state: JsonObject }).state;
    const pass_code = match![1]!.replaceAll(', ', '');
    const verified = await method.verify(
      verifyContext({ services, user, method: 'IVR', state, fields: { pass_code } }),
    );
    expect(verified).to.deep.equal({ ok: true });
  });

  it('spells the code in a configured message too', async () => {
    const { channel, services, methods } = await setup({ message: 'Code: {code}. Valid {minutes} minutes.' });
    await methods[0]!.initiate(initiateContext({ services, user: fakeUser(), method: 'IVR' }));
    await services.settle();
    expect(channel.sent[0]!.text).to.match(/^Code: (\d, ){5}\d\. Valid 5 minutes\.$/);
  });
});
