import type { DependencyCheck, DependencyState } from '@gatehouse-auth/plugin-api';

export type { DependencyState } from '@gatehouse-auth/plugin-api';

export interface DependencyOptions {
  /** A check that takes longer is down. */
  timeoutMs: number;
  /** Answers this recent are reused: scrapes and dashboards do not hammer an SMTP relay. */
  reuseMs: number;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

/**
 * The dependencies an operator wants to see at a glance (the database, Redis, an SMTP relay, a
 * provider's API): checked on demand for `GET /health/dependencies` and the
 * `gatehouse_dependency_up` gauge, all at once, each bounded by a timeout. Readiness does not
 * use them: every node shares an SMTP relay, so taking nodes out of rotation for it would turn a
 * degraded service into an outage.
 */
export class DependencyChecks {
  private readonly checks = new Map<string, { owner: string; check: DependencyCheck }>();
  private last: { at: number; states: Promise<DependencyState[]> } | null = null;

  constructor(private readonly opts: DependencyOptions = { timeoutMs: 5000, reuseMs: 10_000 }) {}

  add(name: string, owner: string, check: DependencyCheck): void {
    if (!NAME.test(name)) {
      throw new Error(
        `dependency name "${name}": letters, digits and _ . : - (at most 64), starting with a letter or digit`,
      );
    }
    const taken = this.checks.get(name);
    if (taken) throw new Error(`dependency "${name}" is already checked by ${taken.owner}`);
    this.checks.set(name, { owner, check });
  }

  get size(): number {
    return this.checks.size;
  }

  /** Every dependency's state: the last answers if recent enough, else a fresh round of checks. */
  states(now = Date.now()): Promise<DependencyState[]> {
    if (!this.last || now - this.last.at >= this.opts.reuseMs) {
      this.last = { at: now, states: Promise.all([...this.checks].map(([name, c]) => this.run(name, c))) };
    }
    return this.last.states;
  }

  private async run(name: string, { owner, check }: { owner: string; check: DependencyCheck }) {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.opts.timeoutMs} ms`)), this.opts.timeoutMs);
    });
    const state = (up: boolean, reason?: string): DependencyState => ({
      name,
      owner,
      up,
      ...(reason === undefined ? {} : { reason }),
      ms: Math.round(performance.now() - started),
      checkedAt: new Date().toISOString(),
    });
    try {
      await Promise.race([Promise.resolve().then(check), timeout]);
      return state(true);
    } catch (err) {
      return state(false, String((err as Error)?.message ?? err).slice(0, 300) || 'check failed');
    } finally {
      clearTimeout(timer);
    }
  }
}
