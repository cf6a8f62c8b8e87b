import { createHash } from 'node:crypto';
import type { Asset } from '../login/assets.js';

/**
 * The style of the console and the account page. They have no script at all: every action is
 * a plain form, so they work by keyboard and under the login pages' CSP unchanged.
 */
const CSS = String.raw`:root { color-scheme: light; --accent: #1f5fbf; --text: #1d2330; --muted: #5b6475; --line: #cfd5df;
  --danger: #a61b1b; }
* { box-sizing: border-box; }
body { margin: 0; background: #f2f4f8; color: var(--text); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
.skip { position: absolute; left: -999px; top: 0; padding: .5rem 1rem; background: #fff; }
.skip:focus { left: 1rem; z-index: 2; }
header.bar { display: flex; flex-wrap: wrap; align-items: center; gap: 1rem 2rem; padding: .75rem 1.5rem; background: #fff;
  border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; color: var(--text); text-decoration: none; font-size: 1.05rem; }
nav ul { display: flex; gap: 1.25rem; margin: 0; padding: 0; list-style: none; }
nav a { color: var(--accent); text-decoration: none; padding: .25rem 0; border-bottom: 2px solid transparent; }
nav a[aria-current="page"] { color: var(--text); border-bottom-color: var(--accent); font-weight: 600; }
.who { margin-left: auto; display: flex; align-items: center; gap: .75rem; color: var(--muted); }
main { max-width: 72rem; margin: 0 auto; padding: 1.5rem; }
h1 { margin: 0 0 1rem; font-size: 1.4rem; }
h2 { margin: 2rem 0 .75rem; font-size: 1.1rem; }
section.panel { background: #fff; border: 1px solid var(--line); border-radius: .6rem; padding: 1rem 1.25rem; margin-bottom: 1.25rem; }
section.panel > h2:first-child { margin-top: 0; }
table { width: 100%; border-collapse: collapse; }
th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid #e6e9ef; vertical-align: top; }
th { font-size: .85rem; color: var(--muted); font-weight: 600; }
td form { display: inline; }
a { color: var(--accent); }
label { display: block; font-weight: 600; font-size: .9rem; margin-bottom: .25rem; }
input[type="text"], input[type="email"], input[type="tel"], input[type="search"] { padding: .45rem .6rem; font: inherit;
  border: 1px solid var(--line); border-radius: .35rem; min-width: 14rem; }
.row { display: flex; flex-wrap: wrap; align-items: flex-end; gap: .75rem; }
button { padding: .4rem .85rem; font: inherit; font-weight: 600; border-radius: .35rem; cursor: pointer;
  border: 1px solid var(--line); background: #fff; color: var(--text); }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button.danger { color: var(--danger); border-color: #e3b4b4; }
button.link { border: 0; background: none; padding: 0; color: var(--accent); font-weight: 400; text-decoration: underline; }
a:focus-visible, input:focus-visible, button:focus-visible { outline: 3px solid rgba(31, 95, 191, .45); outline-offset: 2px; }
.notice { padding: .6rem .85rem; border-radius: .4rem; background: #e8f5ec; color: #1c5a2e; margin: 0 0 1rem; }
.notice.error { background: #fdecec; color: #8a1c1c; }
.muted, .empty { color: var(--muted); }
.badge { display: inline-block; padding: 0 .45rem; border-radius: .6rem; font-size: .8rem; background: #e9edf4; }
.badge.ok { background: #e2f3e7; color: #1c5a2e; }
.badge.bad { background: #fbe3e3; color: #8a1c1c; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; margin: 0 0 1rem; }
.actions form { margin: 0; }
.facts + .actions, table + .actions { margin-top: 1rem; }
.pager { display: flex; gap: 1rem; align-items: center; margin-top: .75rem; }
ol.codes { columns: 2; font: 1.05rem/1.8 ui-monospace, Menlo, Consolas, monospace; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0; }
dt { color: var(--muted); }
dd { margin: 0; }
`;

export const CONSOLE_CSS: Asset = {
  body: CSS,
  contentType: 'text/css; charset=utf-8',
  version: createHash('sha256').update(CSS).digest('hex').slice(0, 16),
};

/** Where the style sheet is served (both sites use it). */
export const CONSOLE_CSS_PATH = '/console/assets/console.css';
