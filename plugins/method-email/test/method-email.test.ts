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

  describe('in the person’s language (issue 29)', () => {
    async function mailed(request: { uiLocales?: string | null; acceptLanguage?: string }, options = {}) {
      const channel = new CapturingChannel('smtp', ['email']);
      const services = fakeServices({ channels: [channel] });
      const { methods } = await registerWithFakes(plugin, { channel: 'smtp', ...options }, services);
      await methods[0]!.initiate(
        initiateContext({ services, user: fakeUser({ email: 'a@example.com' }), method: 'EMAIL', request }),
      );
      await services.settle();
      return channel.sent[0]!;
    }

    it('German for ui_locales=de, and for a German browser; English otherwise', async () => {
      const byRequest = await mailed({ uiLocales: 'de', acceptLanguage: 'en-US' });
      expect(byRequest).to.deep.include({ subject: 'Ihr Bestätigungscode', locale: 'de' });
      expect(byRequest.text).to.match(/^Ihr Bestätigungscode ist \d{6}\. Er ist 5 Minuten gültig\./);
      expect(await mailed({ acceptLanguage: 'de-CH,de;q=0.9' })).to.deep.include({ locale: 'de' });
      const english = await mailed({ uiLocales: 'fr', acceptLanguage: 'ja' });
      expect(english).to.deep.include({ subject: 'Your verification code', locale: 'en' });
    });

    it('an operator’s text per language (messages), else its one message for every language', async () => {
      const options = { message: 'Code: {code}', messages: { de: 'Ihr Code lautet {code}.' } };
      const german = await mailed({ uiLocales: 'de' }, options);
      expect(german.text).to.match(/^Ihr Code lautet \d{6}\.$/);
      expect(german.locale).to.equal('de');
      const other = await mailed({ acceptLanguage: 'en' }, options);
      expect(other.text).to.match(/^Code: \d{6}$/);
      // The operator's one text is in no language the server knows.
      expect(other).not.to.have.property('locale');
    });

    it('refuses a per-language text without {code}, or under something that is no language tag', async () => {
      for (const messages of [{ de: 'Ihr Code' }, { 'not a tag': 'x {code}' }]) {
        let error: unknown;
        try {
          await registerWithFakes(plugin, { channel: 'smtp', messages }, fakeServices());
        } catch (err) {
          error = err;
        }
        expect(error, JSON.stringify(messages)).to.be.an('error');
      }
    });
  });
});
