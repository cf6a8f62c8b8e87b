/**
 * The hosted pages' languages (issue 13): which locale a request gets (ui_locales, then
 * Accept-Language, then English), the built-in catalogs (German complete, no stray keys or
 * placeholders), a deployment's message files (override, add a locale, refused mistakes), and
 * that catalog text never becomes markup.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { BootError } from '@gatehouse-auth/core';
import {
  BUILTIN_CATALOGS,
  checkCatalog,
  loadCatalogs,
  OPEN_PREFIXES,
  type Catalog,
} from '../../core/dist/i18n/catalogs.js';
import { Locales } from '../../core/dist/i18n/locales.js';
import { acceptedLanguages, html, negotiate, placeholders } from '@gatehouse-auth/plugin-api';
import { REPO_ROOT } from '../support/paths.js';

const builtin = (locale: string): Catalog =>
  JSON.parse(readFileSync(path.join(BUILTIN_CATALOGS, `${locale}.json`), 'utf8')) as Catalog;

/** A request with these headers, as Locales.for reads it. */
const request = (acceptLanguage?: string) =>
  ({ headers: acceptLanguage ? { 'accept-language': acceptLanguage } : {} }) as Parameters<Locales['for']>[0];

/** Runs `fn`, expecting a CONFIG_INVALID BootError; returns its message. */
function bootError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(BootError);
    expect((err as BootError).code).to.equal('CONFIG_INVALID');
    return (err as Error).message;
  }
  return expect.fail('expected a BootError');
}

describe('locales: choosing the language of a page', () => {
  const supported = ['en', 'de', 'de-CH', 'fr'];

  it('ui_locales beats Accept-Language, in its own order of preference', () => {
    expect(negotiate(supported, 'de', 'fr', 'en')).to.equal('de');
    expect(negotiate(supported, 'it fr de', 'de', 'en')).to.equal('fr');
  });

  it('without a supported ui_locales, the best Accept-Language (q values, q=0 never)', () => {
    expect(negotiate(supported, 'it ja', 'fr;q=0.4, de;q=0.9, en;q=0.8', 'en')).to.equal('de');
    expect(negotiate(supported, null, 'de;q=0, fr', 'en')).to.equal('fr');
    expect(negotiate(supported, null, 'it, *;q=0.5', 'en')).to.equal('en');
  });

  it('a region or script falls back to its language; case does not matter', () => {
    expect(negotiate(supported, 'de-AT', undefined, 'en')).to.equal('de');
    expect(negotiate(supported, 'DE-ch', undefined, 'en')).to.equal('de-CH');
    expect(negotiate(supported, null, 'de-Latn-AT', 'en')).to.equal('de');
  });

  it('unknown or malformed languages fall back to English', () => {
    expect(negotiate(supported, 'xx', 'yy;q=1', 'en')).to.equal('en');
    expect(negotiate(supported, '', '', 'en')).to.equal('en');
    expect(negotiate(supported, null, ';;;,,q=1;de', 'en')).to.equal('en');
    expect(negotiate(supported, null, 'de;q=abc', 'en')).to.equal('en');
  });

  it('Accept-Language: equal weights keep their order; a huge header is cut, not parsed whole', () => {
    expect(acceptedLanguages('fr, de;q=0.5, it, en;q=0.5')).to.deep.equal(['fr', 'it', 'de', 'en']);
    expect(acceptedLanguages(`${'xx, '.repeat(10_000)}de`)).to.have.length.at.most(20);
  });

  it('Locales.for: ui_locales, then Accept-Language, then English; <html lang> is the chosen tag', () => {
    const locales = Locales.load(undefined);
    expect(locales.for(request('en-US'), 'de').locale).to.equal('de');
    expect(locales.for(request('de-DE,de;q=0.9'), null).locale).to.equal('de');
    expect(locales.for(request('de'), 'en').locale).to.equal('en');
    expect(locales.for(request(), 'tlh').locale).to.equal('en');
    expect(locales.supported).to.deep.equal(['en', 'de']);
  });
});

describe('locales: the built-in catalogs', () => {
  const en = builtin('en');

  it('every catalog has every English message, the same placeholders, and no stray key', () => {
    const locales = readdirSync(BUILTIN_CATALOGS).map((f) => f.replace(/\.json$/, ''));
    expect(locales).to.include.members(['en', 'de']);
    for (const locale of locales.filter((l) => l !== 'en')) {
      const catalog = builtin(locale);
      const missing = Object.keys(en).filter((key) => catalog[key] === undefined);
      expect(missing, `${locale}.json lacks`).to.deep.equal([]);
      const stray = Object.keys(catalog).filter(
        (key) => en[key] === undefined && !OPEN_PREFIXES.some((p) => key.startsWith(p)),
      );
      expect(stray, `${locale}.json has keys English does not`).to.deep.equal([]);
      for (const key of Object.keys(en)) {
        if (key === 'js.enter_field') continue; // English lower-cases the label; German keeps it as is
        expect(placeholders(catalog[key]!).sort(), `${locale} ${key}`).to.deep.equal(placeholders(en[key]!).sort());
      }
    }
  });

  it('German translates every bundled method it knows of: the plugins’ English never shows on a German page', () => {
    const de = builtin('de');
    const methods = readdirSync(path.join(REPO_ROOT, 'plugins'))
      .filter((dir) => dir.startsWith('method-'))
      .map((dir) => dir.slice('method-'.length).toUpperCase());
    for (const id of methods) expect(de[`method.${id}.label`], `method.${id}.label`).to.be.a('string');
  });

  it("German words the account page's renewal of every bundled method that offers one (issue 29 walk)", () => {
    const de = builtin('de');
    const renewable = readdirSync(path.join(REPO_ROOT, 'plugins'))
      .filter((dir) => dir.startsWith('method-'))
      .filter((dir) => {
        const src = path.join(REPO_ROOT, 'plugins', dir, 'src');
        const files = readdirSync(src).filter((f) => f.endsWith('.ts'));
        return files.some((f) => /\brenew: \{/.test(readFileSync(path.join(src, f), 'utf8')));
      })
      .map((dir) => dir.slice('method-'.length).toUpperCase());
    expect(renewable).to.include('BACKUPCODE');
    for (const id of renewable) {
      for (const key of [`method.${id}.renew.text`, `method.${id}.renew.button`])
        expect(de[key], key).to.be.a('string');
    }
  });

  it('every message key the core names in its source is in en.json', () => {
    const used = new Set<string>();
    const scan = (dir: string) => {
      for (const entry of readdirSync(dir)) {
        const file = path.join(dir, entry);
        if (statSync(file).isDirectory()) scan(file);
        else if (/\.(ts|js)$/.test(entry)) {
          const text = readFileSync(file, 'utf8');
          for (const m of text.matchAll(/\b(?:t|html)\('([a-z_]+(?:\.[a-z_]+)+)'/g)) used.add(m[1]!);
          // Keys in lists (the link page's title and text): two dots at least, so no event type.
          for (const m of text.matchAll(/'((?:login|link)\.[a-z_]+\.[a-z_.]+)'/g)) used.add(m[1]!);
        }
      }
    };
    scan(path.join(REPO_ROOT, 'core', 'src'));
    // The contract's page kit (decision 85: the layout, the error and notice pages) and its scripts.
    scan(path.join(REPO_ROOT, 'core', 'plugin-api', 'src'));
    scan(path.join(REPO_ROOT, 'core', 'plugin-api', 'assets'));
    // The sign-in link page (decision 66) names the core's catalogs' `link.…` keys.
    scan(path.join(REPO_ROOT, 'plugins', 'page-link', 'src'));
    // The consent page and the account choice (decision 75) name their `consent.…` and `account.…` keys.
    scan(path.join(REPO_ROOT, 'plugins', 'page-consent', 'src'));
    // The binding link's page (decision 69) names their `device_link.…` keys.
    scan(path.join(REPO_ROOT, 'plugins', 'devices-api', 'src'));
    // A sanity check of the scan (the landing page's keys left with it, decision 76).
    expect(used.size).to.be.greaterThan(30);
    expect([...used].filter((key) => en[key] === undefined && !key.startsWith('js.error.'))).to.deep.equal([]);
    // Keys built at run time: the login page's error pages and the device module's states.
    const pageErrors = [
      'missing',
      'unknown',
      'expired',
      'completed',
      'no_client',
      'other_browser',
      'no_method',
      'none_set_up',
    ];
    for (const name of pageErrors) {
      expect(en[`login.error.${name}.title`], name).to.be.a('string');
      expect(en[`login.error.${name}.text`], name).to.be.a('string');
    }
    for (const state of ['initiated', 'acknowledged', 'allowed', 'denied', 'cancelled', 'expired', 'consumed']) {
      expect(en[`js.device.${state}`], state).to.be.a('string');
    }
    // While a device method waits, the page says what to do on the device in the method's words.
    for (const method of ['PUSH', 'PATTERN', 'TOUCHID', 'FACE']) {
      for (const state of ['initiated', 'acknowledged']) {
        expect(en[`method.${method}.js.${state}`], `${method} ${state}`).to.be.a('string');
      }
    }
    expect(en['js.device.type']).to.include('{number}');
  });
});

describe('locales: a deployment’s message files (locales.messages_dir)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-messages-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, body: unknown) =>
    writeFileSync(path.join(dir, name), typeof body === 'string' ? body : JSON.stringify(body));

  it('overrides built-in messages, adds a method’s, and adds a locale that reads through to English', () => {
    write('de.json', { 'login.continue': 'Los geht’s', 'method.QUESTION.label': 'Sicherheitsfrage' });
    write('fr.json', { 'login.title': 'Se connecter à {app}', 'login.continue': 'Continuer' });
    write('README.md', 'not a catalog');
    const locales = Locales.load(dir);
    expect(locales.supported).to.deep.equal(['en', 'de', 'fr']);
    const de = locales.messages('de');
    expect(de.t('login.continue')).to.equal('Los geht’s');
    expect(de.t('login.step', { step: 1, steps: 2 })).to.equal('Schritt 1 von 2');
    expect(de.or('method.QUESTION.label', 'Security question')).to.equal('Sicherheitsfrage');
    const fr = locales.messages('fr');
    expect(fr.t('login.title', { app: 'Shop' })).to.equal('Se connecter à Shop');
    expect(fr.t('login.step', { step: 1, steps: 2 })).to.equal('Step 1 of 2');
    expect(fr.or('method.QUESTION.label', 'Security question')).to.equal('Security question');
  });

  it('a regional file (de-AT) reads through to its language, then English', () => {
    write('de-AT.json', { 'login.continue': 'Weiter geht’s' });
    const messages = Locales.load(dir).messages('de-AT');
    expect(messages.t('login.continue')).to.equal('Weiter geht’s');
    expect(messages.t('login.send')).to.equal('Code senden');
    expect(messages.locale).to.equal('de-AT');
  });

  it('refuses, at start-up, what would break a page: a typo in a key, an unknown placeholder, a bad file', () => {
    write('de.json', { 'login.contnue': 'Weiter' });
    expect(bootError(() => loadCatalogs(dir))).to.equal(
      'locales.messages_dir: de.json: unknown message key "login.contnue"',
    );
    write('de.json', { 'login.title': 'Bei {client} anmelden' });
    expect(bootError(() => loadCatalogs(dir))).to.equal(
      'locales.messages_dir: de.json: login.title uses {client}, which the page does not fill in',
    );
    write('de.json', { 'login.title': 42 });
    expect(bootError(() => loadCatalogs(dir))).to.equal('locales.messages_dir: de.json: login.title must be a string');
    write('de.json', '["a list"]');
    expect(bootError(() => loadCatalogs(dir))).to.equal(
      'locales.messages_dir: de.json: must be a JSON object of message keys to texts',
    );
    write('de.json', '{ not json');
    expect(bootError(() => loadCatalogs(dir))).to.match(/^locales\.messages_dir: de\.json: .*JSON/);
    rmSync(path.join(dir, 'de.json'));
    write('german.json', {});
    expect(bootError(() => loadCatalogs(dir))).to.equal(
      'locales.messages_dir: german.json is not named after a language tag (de.json, de-AT.json)',
    );
    expect(bootError(() => loadCatalogs(path.join(dir, 'missing')))).to.match(
      /^locales\.messages_dir: cannot read the directory /,
    );
  });

  it('checkCatalog lets methods and API error codes in, whatever English has', () => {
    expect(() => checkCatalog({ 'method.X.label': 'x', 'js.error.SOMETHING': 'y' }, new Map(), 'test')).to.not.throw();
  });
});

describe('locales: catalog text is never markup', () => {
  it('t() is plain text (the templates escape it); html() escapes the message and fills in only the given parts', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-messages-'));
    try {
      writeFileSync(
        path.join(dir, 'de.json'),
        JSON.stringify({ 'login.signed_in_as': '<img src=x onerror=alert(1)> als {name}' }),
      );
      const de = Locales.load(dir).messages('de');
      const name = html`<strong>${'<script>'}</strong>`;
      expect(de.html('login.signed_in_as', { name }).value).to.equal(
        '&lt;img src=x onerror=alert(1)&gt; als <strong>&lt;script&gt;</strong>',
      );
      expect(html`<p>${de.t('login.signed_in_as', { name: '<b>' })}</p>`.value).to.equal(
        '<p>&lt;img src=x onerror=alert(1)&gt; als &lt;b&gt;</p>',
      );
      // A value that looks like a placeholder is not filled in again.
      expect(de.t('login.title', { app: '{app}' })).to.equal('Bei {app} anmelden');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
