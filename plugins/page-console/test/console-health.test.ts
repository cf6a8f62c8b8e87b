import { expect } from 'chai';
import type { ServerOverview } from '@gatehouse-auth/core';
import { fakeServices, silentLogger } from '@gatehouse-auth/testing';
import { pluginsBody } from '../src/index.js';
import type { Messages } from '@gatehouse-auth/site-kit';

describe("the console's health panel", function () {
  it('lists every dependency: the database by its label, the rest by name, a failing one with its reason', async function () {
    const catalog = new Map([
      ['console.health.database', 'Database'],
      ['console.health.ok', 'OK'],
      ['console.health.failing', 'Failing'],
    ]);
    const t = { locale: 'en', t: (key: string) => catalog.get(key) ?? key } as unknown as Messages;
    const overview: ServerOverview = {
      apps: [],
      plugins: [],
      methods: [],
      draining: false,
      dependencies: [
        { name: 'database', owner: 'core', up: true, ms: 1, checkedAt: '2026-01-01T00:00:00.000Z' },
        {
          name: 'smtp:mail',
          owner: '@gatehouse-auth/channel-smtp',
          up: false,
          ms: 2,
          reason: 'Invalid login: 535 <rejected>',
          checkedAt: '2026-01-01T00:00:00.000Z',
        },
      ],
    };
    const deps = { overview: async () => overview, services: fakeServices() };
    const page = String((await pluginsBody(t, deps, silentLogger)).value);
    expect(page).to.match(/<dt>Database<\/dt>\s*<dd>\s*<span class="badge ok">OK<\/span>/);
    // The reason is the check's error, escaped like any other text.
    expect(page).to.match(
      /<dt><code>smtp:mail<\/code><\/dt>\s*<dd>\s*<span class="badge bad">Failing<\/span> Invalid login: 535 &lt;rejected&gt;/,
    );
  });
});
