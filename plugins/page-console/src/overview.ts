import {
  html,
  type DependencyState,
  type PluginApi,
  type SafeHtml,
  type ServerOverview,
  type Services,
} from '@gatehouse-auth/core';
import type { Messages } from '@gatehouse-auth/site-kit';

/** What the plugins and health page reads: the server's overview, the events, the channels. */
export interface OverviewDeps {
  overview(): Promise<ServerOverview>;
  services: Pick<Services, 'clock' | 'history' | 'channels'>;
}

type Logger = PluginApi['logger'];

/** Events the health page counts per method and channel, over this window. */
const HEALTH_WINDOW_MS = 24 * 3600 * 1000;

/**
 * The console's plugins and health page: whether the database answers (and how fast), whether
 * the node is draining, the plugins loaded with what each registered, and the last day's
 * sign-ins per method and deliveries.
 */
export async function pluginsBody(t: Messages, deps: OverviewDeps, log: Logger): Promise<SafeHtml> {
  const { history, clock, channels } = deps.services;
  const since = new Date(clock.now().getTime() - HEALTH_WINDOW_MS);
  const server = await deps.overview();
  const { dependencies } = server;
  for (const d of dependencies.filter((d) => !d.up)) {
    log.warn({ dependency: d.name, owner: d.owner, reason: d.reason }, 'console health: a dependency is down');
  }
  const count = (types: string[], method: string) => history.count({ types, method, since });
  const methods = await Promise.all(
    server.methods.map(async (id) => ({
      id,
      ok: await count(['verification.success'], id),
      failed: await count(['verification.failure'], id),
    })),
  );
  // Deliveries are background jobs: their outcomes are events of every channel together
  // (`delivery.done`, `delivery.failed`: services.channels.enqueue).
  const deliveries = {
    done: await history.count({ types: ['delivery.done'], since }),
    failed: await history.count({ types: ['delivery.failed'], since }),
  };
  return html`<section class="panel" aria-labelledby="gh-health">
      <h2 id="gh-health">${t.t('console.health.title')}</h2>
      <dl class="facts">
        ${dependencies.map((d) => dependencyFact(t, d))}
        <dt>${t.t('console.health.traffic')}</dt>
        <dd>
          ${
            server.draining
              ? html`<span class="badge bad">${t.t('console.health.draining')}</span>`
              : html`<span class="badge ok">${t.t('console.health.serving')}</span>`
          }
        </dd>
      </dl>
    </section>
    <section class="panel" aria-labelledby="gh-plugins">
      <h2 id="gh-plugins">${t.t('console.plugins.loaded')}</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">${t.t('console.col.plugin')}</th>
            <th scope="col">${t.t('console.col.version')}</th>
            <th scope="col">${t.t('console.col.contributes')}</th>
          </tr>
        </thead>
        <tbody>
          ${server.plugins.map(
            (p) =>
              html`<tr>
                <th scope="row"><code>${p.name}</code></th>
                <td>${p.version}</td>
                <td>
                  ${
                    Object.entries(p.contributes)
                      .filter(([, ids]) => ids.length)
                      .map(([kind, ids]) => `${kind}: ${ids.join(', ')}`)
                      .join('; ') || '–'
                  }
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
    </section>
    <section class="panel" aria-labelledby="gh-method-health">
      <h2 id="gh-method-health">${t.t('console.health.methods')}</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">${t.t('console.col.method')}</th>
            <th scope="col">${t.t('console.col.succeeded')}</th>
            <th scope="col">${t.t('console.col.failed')}</th>
          </tr>
        </thead>
        <tbody>
          ${methods.map(
            (m) =>
              html`<tr>
                <th scope="row">${m.id}</th>
                <td>${m.ok}</td>
                <td>${m.failed}</td>
              </tr>`,
          )}
        </tbody>
      </table>
      <h2>${t.t('console.health.deliveries')}</h2>
      <dl class="facts">
        <dt>${t.t('console.health.channels')}</dt>
        <dd>${channels.ids().join(', ') || '–'}</dd>
        <dt>${t.t('console.col.delivered')}</dt>
        <dd>${deliveries.done}</dd>
        <dt>${t.t('console.col.failed')}</dt>
        <dd>${deliveries.failed}</dd>
      </dl>
      <p class="muted">${t.t('console.health.window')}</p>
    </section>`;
}

/** One dependency of the health panel: the database by its label, others by their check's name. */
function dependencyFact(t: Messages, d: DependencyState): SafeHtml {
  const label = d.name === 'database' ? t.t('console.health.database') : html`<code>${d.name}</code>`;
  return html`<dt>${label}</dt>
    <dd>
      ${
        d.up
          ? html`<span class="badge ok">${t.t('console.health.ok')}</span> ${t.t('console.health.ms', { ms: d.ms })}`
          : html`<span class="badge bad">${t.t('console.health.failing')}</span> ${d.reason ?? ''}`
      }
    </dd>`;
}
