/**
 * Issue 29: the device binding link opened in a browser (the QR code's link on a computer). The
 * page said "Scan the QR code" and showed none; now it shows the link's QR code (a PNG data URL
 * the page's CSP lets load) and the link as text to copy, in English and German, and says a
 * used or expired link is no longer valid. In Chromium, against the demo config.
 */
import { expect } from 'chai';
import type { BrowserContext, Page } from 'playwright-core';
import QRCode from 'qrcode';
import { Authenticator } from '@gatehouse-auth/authenticator';
import { openChromium, requireChromium, type Chromium } from '../support/chromium.js';
import { bindingFor, startDemoServer, type DemoServer } from './support.js';

describe('device binding page: the QR code and the link (Chromium, issue 29)', function () {
  this.timeout(60_000);
  let server: DemoServer;
  let chrome: Chromium | undefined;
  let context: BrowserContext;
  let page: Page;
  const violations: string[] = [];

  before(async function () {
    requireChromium(this);
    server = await startDemoServer();
    chrome = await openChromium();
    context = chrome.context;
    page = context.pages()[0] ?? (await context.newPage());
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
    });
  });

  after(async function () {
    await chrome?.close();
    await server?.close();
  });

  /** Opens a link with the browser asking for `language` first. */
  async function open(link: string, language: string) {
    await page.setExtraHTTPHeaders({ 'Accept-Language': language });
    return page.goto(link);
  }

  /** The image's source and whether the browser drew it (a CSP block leaves it unloaded). */
  async function qrImage() {
    const img = page.locator('#gh-qr');
    const src = await img.getAttribute('src');
    // The image's natural width: 0 when the browser did not draw it.
    const drawn = await img.evaluate((el: { complete: boolean; naturalWidth: number }) =>
      el.complete ? el.naturalWidth : 0,
    );
    return { src, drawn, alt: await img.getAttribute('alt') };
  }

  it("shows the link's QR code and the link to copy, in English", async function () {
    const { binding_url, qr_code } = await bindingFor(server, 'PUSH');
    const response = await open(binding_url, 'en-US,en;q=0.9');
    expect(response?.status()).to.equal(200);
    expect(response?.headers()['content-security-policy']).to.include("img-src 'self' data:");
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal(
      'Scan this QR code with your authenticator app',
    );
    const { src, drawn, alt } = await qrImage();
    expect(src).to.match(/^data:image\/png;base64,/);
    // The QR code of this very link, as the qrcode package draws it (the setup API's too).
    expect(src).to.equal(await QRCode.toDataURL(binding_url));
    expect(src).to.equal(qr_code);
    expect(drawn).to.be.greaterThan(0);
    expect(alt).to.equal('QR code of the link that binds your authenticator app');
    expect(await page.locator('#gh-binding-link').textContent()).to.equal(binding_url);
    expect(await page.getByText('The link, to copy into the app:').isVisible()).to.equal(true);
    expect(violations).to.deep.equal([]);
  });

  it('says it in German', async function () {
    const { binding_url } = await bindingFor(server, 'PUSH');
    const response = await open(binding_url, 'de-DE,de;q=0.9,en;q=0.5');
    expect(response?.status()).to.equal(200);
    expect(await page.locator('html').getAttribute('lang')).to.equal('de');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal(
      'Scannen Sie diesen QR-Code mit Ihrer Authenticator-App',
    );
    const { src, drawn, alt } = await qrImage();
    expect(src).to.equal(await QRCode.toDataURL(binding_url));
    expect(drawn).to.be.greaterThan(0);
    expect(alt).to.equal('QR-Code des Links, der Ihre Authenticator-App verbindet');
    expect(await page.locator('#gh-binding-link').textContent()).to.equal(binding_url);
    expect(await page.getByText('Der Link zum Kopieren in die App:').isVisible()).to.equal(true);
  });

  it('a used, expired or unknown link shows no QR code: 410, "no longer valid"', async function () {
    // Used: a device bound with it.
    const used = await bindingFor(server, 'PUSH');
    const device = await Authenticator.create({ now: () => server.clock.now() });
    await device.bind(used.binding_url);
    // Expired: past its 10 minutes on the server's clock (which the next tests do not need).
    const expired = await bindingFor(server, 'PUSH');
    const unknown = new URL(used.binding_url);
    unknown.searchParams.set('code', 'x'.repeat(43));
    const links = [used.binding_url, unknown.toString(), server.url('/devices/bind')];
    server.clock.advance(601);
    links.push(expired.binding_url);
    for (const link of links) {
      const response = await open(link, 'en');
      expect(response?.status(), link).to.equal(410);
      expect(await page.getByRole('heading', { level: 1 }).textContent(), link).to.equal(
        'This link is no longer valid',
      );
      expect(await page.locator('img').count(), link).to.equal(0);
    }
  });
});
