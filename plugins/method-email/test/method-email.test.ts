import { expect } from 'chai';
import type { JsonObject } from '@gatehouse-auth/core';
import {
  CapturingChannel,
  enrollmentContext,
  fakeServices,
  fakeUser,
  initiateContext,
  registerWithFakes,
  verifyContext,
} from '@gatehouse-auth/testing';
import plugin from '../src/index.js';

describe('@gatehouse-auth/method-email', () => {
  async function setup() {
    const channel = new CapturingChannel('smtp', ['email']);
    const services = fakeServices({ channels: [channel] });
    const { methods } = await registerWithFakes(plugin, { channel: 'smtp' }, services);
    return { channel, services, methods };
  }

  it('registers the EMAIL method with amr otp', async () => {
    const { methods } = await setup();
    expect(methods).to.have.length(1);
    expect(methods[0]).to.deep.include({ id: 'EMAIL', amr: ['otp'], verifyFields: ['pass_code'] });
  });

  it('mails the code with a subject and answers with a masked address', async () => {
    const { channel, services, methods } = await setup();
    const method = methods[0]!;
    const user = fakeUser({ email: 'Alice@Example.com' });
    const outcome = await method.initiate(initiateContext({ services, user, method: 'EMAIL' }));
    await services.settle();
    expect(outcome).to.deep.include({ ok: true, response: { medium_text: 'a***@example.com' } });

    expect(channel.sent).to.have.length(1);
    const message = channel.sent[0]!;
    expect(message).to.deep.include({ kind: 'email', to: 'alice@example.com', subject: 'Your verification code' });
    const match = /^Your verification code is (\d{6})\. It expires in 5 minutes\./.exec(message.text);
    expect(match, message.text).not.to.equal(null);

    const state = (outcome as { state: JsonObject }).state;
    const verified = await method.verify(
      verifyContext({ services, user, method: 'EMAIL', state, fields: { pass_code: match![1]! } }),
    );
    expect(verified).to.deep.equal({ ok: true });
  });

  it('takes the address to enroll from body.email', async () => {
    const { channel, services, methods } = await setup();
    const outcome = await methods[0]!.enrollment!.initiate(
      enrollmentContext({ services, user: fakeUser(), method: 'EMAIL', body: { email: ' Bob@Example.org' } }),
    );
    expect(outcome).to.deep.include({ ok: true, response: { medium_text: 'b***@example.org' } });
    expect(channel.sent[0]!.to).to.equal('bob@example.org');
  });
});
