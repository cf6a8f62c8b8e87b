import { expect } from 'chai';
import { siteCatalogs } from '@gatehouse-auth/site-kit';

describe('the sites’ catalogs (site kit, console, account page)', function () {
  for (const site of ['page-console', 'page-account']) {
    it(`${site}: German has every English message, with the same placeholders`, function () {
      const { en, de } = siteCatalogs(new URL(`../../${site}/locales/`, import.meta.url));
      const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      expect(Object.keys(de!).sort()).to.deep.equal(Object.keys(en!).sort());
      for (const [key, text] of Object.entries(en!))
        expect(placeholders(de![key]!), key).to.deep.equal(placeholders(text));
    });
  }
});
