/**
 * The route declarations are checked at start-up by the core itself (decisions 26, 59): an
 * operation naming an error code no catalogue has stops the boot, whether or not
 * @gatehouse-auth/openapi publishes the document (these configs leave it out).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { BootError, buildApp } from '@gatehouse-auth/core';
import { testConfig, type PluginEntryInput } from '../support/config.js';
import { fixturePlugin } from '../support/paths.js';

/** buildApp with these plugins must fail; the BootError it fails with. */
async function bootError(plugins: PluginEntryInput[]): Promise<BootError> {
  try {
    const gatehouse = await buildApp(testConfig(plugins));
    await gatehouse.close();
  } catch (err) {
    expect(err).to.be.instanceOf(BootError);
    return err as BootError;
  }
  expect.fail('expected a BootError');
}

describe('API declarations', function () {
  this.timeout(60_000);
  describe('that stop start-up', () => {
    it('an operation naming an error code no catalogue has, without its status', async () => {
      const err = await bootError([{ path: fixturePlugin('unknown-code-route.js') }]);
      expect(err.code).to.equal('API_SPEC_INVALID');
      expect(err.message).to.include('SOMETHING_ODD');
    });

    it('a method whose errors are not { CODE: [status, meaning] }', async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-oas-'));
      try {
        const file = path.join(dir, 'bad-errors.js');
        writeFileSync(
          file,
          `export default { name: '@fixture/bad-errors', apiVersion: '^1', register(api) {
          api.methods.add({ id: 'ODD', amr: ['kba'], verifyFields: ['x'], errors: { ODD_THING: 'bad' },
            isEnrolled: async () => true, initiate: async () => ({ ok: true }), verify: async () => ({ ok: true }) });
        } };`,
        );
        const err = await bootError([{ path: file }]);
        expect(err.code).to.equal('PLUGIN_INVALID');
        expect(err.message).to.include('has errors that are not { CODE: [status, meaning] }');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
