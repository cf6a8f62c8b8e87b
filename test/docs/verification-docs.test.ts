import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { VERIFICATION_ERRORS } from '@gatehouse-auth/plugin-api';

describe('docs/verification.md', () => {
  const doc = readFileSync(new URL('../../docs/verification.md', import.meta.url), 'utf8');
  const table = doc.slice(doc.indexOf('## All codes of the verification and login APIs'));

  for (const [code, [status]] of Object.entries(VERIFICATION_ERRORS)) {
    it(`lists ${code} with status ${status}`, () => {
      const row = table.split('\n').find((line) => line.startsWith(`| \`${code}\` |`));
      expect(row, `no row for ${code}`).to.be.a('string');
      expect(row).to.contain(String(status));
    });
  }
});
