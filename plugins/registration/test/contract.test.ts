/**
 * The registration plugin's contract (plugin API 1.3's `api.prompt`) and what stops start-up:
 * the prompt handler it registers, its catalogs, an app that proves an address without a
 * channel, a bad app config, and a second plugin claiming prompt=create.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { buildApp, createLogger, parseConfig } from '@gatehouse-auth/core';
import { fakeServices, registerWithFakes } from '@gatehouse-auth/testing';
import registration, { appRegistration } from '../src/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CAPTURE = path.join(here, '../../../test/verification/fixtures/capture-channel.js');
const SECOND = path.join(here, 'fixtures/second-create.js');

function config(plugins: Record<string, unknown>[], registrationKey: Record<string, unknown>) {
  return parseConfig(
    {
      issuer: 'http://127.0.0.1:1',
      database: { url: 'sqlite::memory:' },
      log: { level: 'silent' },
      secrets: { encryption_key: Buffer.alloc(32, 3).toString('base64') },
      plugins: [
        { name: '@gatehouse-auth/method-password', options: { memory_cost: 1024, time_cost: 2 } },
        { path: CAPTURE },
        { name: '@gatehouse-auth/grant-authorization-code' },
        { name: '@gatehouse-auth/management' },
        { name: '@gatehouse-auth/page-login' },
        { name: '@gatehouse-auth/verification-api' },
        ...plugins,
      ],
      apps: [
        {
          client_id: 'club',
          client_secret: 'club-secret-0123456789abcdef0123456789abcdef',
          redirect_uris: ['https://club.example/cb'],
          login_stages: [['PASSWORD']],
          registration: registrationKey,
        },
      ],
    },
    {},
  );
}

describe('registration plugin: contract and start-up', () => {
  it('claims prompt=create at /register, provides the registration service, and has every text in German', async () => {
    const services = fakeServices();
    const registered = await registerWithFakes(registration, { email_channel: 'capture' }, services);
    const handler = registered.prompts.get('create')!;
    expect(handler.path).to.equal('/register');
    const settings = (enabled: boolean) => ({ settings: { registration: appRegistration.parse({ enabled }) } });
    expect(handler.enabled({ clientId: 'a', ...settings(false) } as never)).to.equal(false);
    expect(handler.enabled({ clientId: 'b', ...settings(true) } as never)).to.equal(true);
    expect(services.provided.has('registration')).to.equal(true);
    expect(Object.keys(registered.catalogs.de!).sort()).to.deep.equal(Object.keys(registered.catalogs.en!).sort());
  });

  it('stops start-up for an unknown channel, naming the option', async () => {
    let message = '';
    try {
      await registerWithFakes(registration, { email_channel: 'pigeon' }, fakeServices());
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).to.equal('options.email_channel: no delivery channel "pigeon"');
  });

  it('refuses an app config whose code proves no required address, or lists a field twice', () => {
    expect(() => appRegistration.parse({ enabled: true, fields: [{ name: 'email' }] })).to.throw(
      /verify: code needs a required email or phone field/,
    );
    expect(() =>
      appRegistration.parse({
        enabled: true,
        fields: [
          { name: 'email', required: true },
          { name: 'email', required: true },
        ],
      }),
    ).to.throw(/listed twice/);
    // Off by default.
    expect(appRegistration.parse(undefined).enabled).to.equal(false);
  });

  it('stops start-up when an app proves its email and the plugin has no email channel', async () => {
    const cfg = config([{ name: '@gatehouse-auth/registration' }], { enabled: true });
    let message = '';
    try {
      await buildApp(cfg, { logger: createLogger('silent') });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).to.match(/app club proves the email address: set options\.email_channel/);
  });

  it('stops start-up when a second plugin claims prompt=create', async () => {
    const cfg = config(
      [{ name: '@gatehouse-auth/registration', options: { email_channel: 'capture' } }, { path: SECOND }],
      { enabled: true },
    );
    let message = '';
    try {
      await buildApp(cfg, { logger: createLogger('silent') });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).to.match(/prompt handler "create"/);
  });
});
