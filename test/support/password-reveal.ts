import { expect } from 'chai';
import type { Page } from 'playwright-core';

/**
 * Asserts the Show / Hide button beside each password field of the page (issue 29, the core's
 * password-reveal.js): a plain button tied to its field, not pressed, named `show`; a click
 * shows the field as text (pressed, named `hide`) with its autocomplete unchanged, and the
 * next click hides it again. Answers how many fields there are.
 */
export async function expectRevealButtons(page: Page, show: string, hide: string): Promise<number> {
  const fields = page.locator('input[type="password"]');
  const count = await fields.count();
  expect(count, 'password fields').to.be.greaterThan(0);
  const ids = await fields.evaluateAll((inputs) => inputs.map((input) => input.id));
  for (const id of ids) {
    const field = page.locator(`[id="${id}"]`);
    const button = page.locator(`button.reveal-toggle[aria-controls="${id}"]`);
    const autocomplete = await field.getAttribute('autocomplete');
    expect(await button.getAttribute('type'), id).to.equal('button');
    expect(await button.getAttribute('name'), id).to.equal(null);
    expect(await button.getAttribute('aria-pressed'), id).to.equal('false');
    expect(await button.innerText(), id).to.equal(show);
    await button.click();
    expect(await field.getAttribute('type'), id).to.equal('text');
    expect(await button.getAttribute('aria-pressed'), id).to.equal('true');
    expect(await button.innerText(), id).to.equal(hide);
    expect(await field.getAttribute('autocomplete'), id).to.equal(autocomplete);
    await button.click();
    expect(await field.getAttribute('type'), id).to.equal('password');
    expect(await button.innerText(), id).to.equal(show);
  }
  return count;
}
