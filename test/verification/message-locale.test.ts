/**
 * Issue 29: codes by text message, email and voice speak the sign-in request's language
 * (`ui_locales`, kept on the login flow), then the browser's (Accept-Language), else English.
 */
import { expect } from 'chai';
import { startVerificationApp, type VerificationApp } from './support.js';
import { initiate, passwordUser, sentMessages } from './steps.js';

describe('verification: codes in the person’s language (issue 29)', function () {
  let v: VerificationApp;
  before(async () => {
    v = await startVerificationApp();
  });
  after(() => v?.close());

  /** A login flow of app1 as /authorize leaves it, with the request's ui_locales. */
  async function flowIn(uiLocales: string | null): Promise<string> {
    const { flows } = v.gatehouse.container.cradle;
    const flow = await flows.create({
      clientId: 'app1',
      stages: [['PASSWORD', 'SMS', 'EMAIL'], ['IVR']],
      ttlSeconds: 600,
      params: { oauth: { client_id: 'app1', ui_locales: uiLocales } },
    });
    return flow.id;
  }

  const lastTo = async (to: string) => (await sentMessages()).filter((m) => m.to === to).at(-1)!;

  it('ui_locales=de: the SMS and the email are German, whatever the browser says', async () => {
    const user = await passwordUser(v, 'de');
    await initiate(v, 'SMS', await flowIn('de'), { identifier: user.phone });
    expect((await lastTo(user.phone)).text).to.match(/^Ihr Bestätigungscode ist \d{6}\. Er ist \d+ Minuten gültig\.$/);
    await initiate(v, 'EMAIL', await flowIn('de-AT en'), { identifier: user.email });
    expect(await lastTo(user.email)).to.deep.include({ subject: 'Ihr Bestätigungscode', locale: 'de' });
  });

  it('without ui_locales, the browser’s language; English for one the method does not speak', async () => {
    const user = await passwordUser(v, 'al');
    const res = await v.http
      .post('/verification-srv/authentication/SMS/initiation')
      .set('Accept-Language', 'de-DE,de;q=0.9,en;q=0.5')
      .send({ request_id: await flowIn(null), usage_type: 'INITIAL_AUTHENTICATION', identifier: user.phone });
    expect(res.status, res.text).to.equal(200);
    await v.gatehouse.idle(); // a first-stage code goes out after the answer
    expect((await lastTo(user.phone)).text).to.match(/^Ihr Bestätigungscode/);
    await initiate(v, 'SMS', await flowIn('fr'), { identifier: user.phone });
    expect((await lastTo(user.phone)).text).to.match(/^Your verification code is \d{6}\./);
  });
});
