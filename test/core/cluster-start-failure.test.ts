import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { runCli } from '../support/cli.js';
import { PEER_BUS_POSTGRES, testConfigInput } from '../support/config.js';

describe('gatehouse start with server.workers: a config every worker refuses', function () {
  this.timeout(40_000);

  it('exits 1 with the start-up error, not 0 once the workers died', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-cluster-'));
    try {
      const at = path.join(dir, 'workers.yaml');
      // No method plugin is listed: the app's stage names a method nobody registers.
      const app = {
        client_id: 'a',
        token_endpoint_auth_method: 'none',
        redirect_uris: ['https://a.example.test/cb'],
        grant_types: ['authorization_code'],
        login_stages: [['PASSWORD']],
      };
      const config = { database: { url: `sqlite:${path.join(dir, 'g.db')}` }, server: { workers: 2 }, apps: [app] };
      // The workers' bus is listed (decision 87): the method is what is missing.
      writeFileSync(at, JSON.stringify(testConfigInput([PEER_BUS_POSTGRES], config)));
      const start = await runCli(['start', '--config', at], { env: { PORT: '0' }, timeoutMs: 30_000 });
      expect(start.code, start.stderr).to.equal(1);
      expect(start.stderr).to.include(
        'gatehouse: apps[0].login_stages[0][0]: no method "PASSWORD" is registered (known: none)\n',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
