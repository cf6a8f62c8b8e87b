import { expect } from 'chai';
import { pluginsBody } from '../../core/dist/console/overview.js';
import { DependencyChecks } from '../../core/dist/observability/dependencies.js';
import { Messages } from '../../core/dist/i18n/messages.js';
import type { OverviewDeps } from '../../core/dist/console/overview.js';
import { silentLogger } from '@gatehouse-auth/testing';

describe("the console's health panel", function () {
  it('lists every dependency: the database by its label, the rest by name, a failing one with its reason', async function () {
    const dependencies = new DependencyChecks();
    dependencies.add('database', 'core', async () => undefined);
    dependencies.add('smtp:mail', '@gatehouse-auth/channel-smtp', async () => {
      throw new Error('Invalid login: 535 <rejected>');
    });
    const t = new Messages(
      'en',
      new Map([
        ['console.health.database', 'Database'],
        ['console.health.ok', 'OK'],
        ['console.health.failing', 'Failing'],
      ]),
    );
    const deps = {
      extensions: { methods: { ids: () => [] }, channels: { ids: () => ['mail'] } },
      loadedPlugins: [],
      events: { count: async () => 0 },
      lifecycle: { draining: false },
      dependencies,
      clock: { now: () => new Date() },
    } as unknown as OverviewDeps;
    const page = String((await pluginsBody(t, deps, silentLogger)).value);
    expect(page).to.match(/<dt>Database<\/dt>\s*<dd>\s*<span class="badge ok">OK<\/span>/);
    // The reason is the check's error, escaped like any other text.
    expect(page).to.match(
      /<dt><code>smtp:mail<\/code><\/dt>\s*<dd>\s*<span class="badge bad">Failing<\/span> Invalid login: 535 &lt;rejected&gt;/,
    );
  });
});
