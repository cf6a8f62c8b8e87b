import { html, type LinkFacts, type Messages, type SafeHtml } from '@gatehouse-auth/core';

/** "Firefox on Windows", or what is known of it. */
function browserText(t: Messages, facts: LinkFacts): string {
  if (facts.browser && facts.os) return t.t('link.confirm.browser_on', { browser: facts.browser, os: facts.os });
  return facts.browser ?? facts.os ?? t.t('link.confirm.browser_unknown');
}

/** "18:42 UTC, about 3 min ago": the time the sign-in started, in UTC, and how long ago. */
function startedText(t: Messages, facts: LinkFacts, now: Date): string {
  const time = new Date(facts.startedAt).toISOString().slice(11, 16);
  const minutes = Math.floor((now.getTime() - facts.startedAt) / 60_000);
  return minutes < 1 ? t.t('link.confirm.started_now', { time }) : t.t('link.confirm.started_ago', { time, minutes });
}

/**
 * What a sign-in link's page on another device shows about the sign-in it would confirm: the
 * browser that started it, when, and the number its screen shows too.
 */
export function linkDetails(t: Messages, facts: LinkFacts, now: Date): SafeHtml {
  return html`<dl class="link-details">
      <dt>${t.t('link.confirm.started_in')}</dt>
      <dd>${browserText(t, facts)}</dd>
      <dt>${t.t('link.confirm.started')}</dt>
      <dd>${startedText(t, facts, now)}</dd>
    </dl>
    <p>${t.t('link.confirm.compare')}</p>
    <p class="push-number" id="gh-link-number">${facts.number}</p>`;
}
