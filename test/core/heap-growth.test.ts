import { execFileSync } from 'node:child_process';
import { expect } from 'chai';

const MODULE = new URL('../../core/dist/heap-growth.js', import.meta.url).href;
const CORE = new URL('../../core/dist/index.js', import.meta.url).href;
const KEY = Buffer.alloc(32, 7).toString('base64');

/** Runs capHeapGrowth(percent) in a fresh node with --trace-gc; its output after the call. */
function traceAfterCap(percent: number): string {
  const script = `
    const { capHeapGrowth } = await import(${JSON.stringify(MODULE)});
    const vm = await import('node:vm');
    console.log('--- cap');
    capHeapGrowth(${percent});
    console.log('--- after', typeof globalThis.gc, vm.runInNewContext('typeof gc'));
  `;
  const out = execFileSync(process.execPath, ['--trace-gc', '--input-type=module', '-e', script], { encoding: 'utf8' });
  return out.slice(out.indexOf('--- cap'));
}

/** Builds a server and listens (what `gatehouse start` does) in a fresh node with --trace-gc. */
function traceListen(percent: number): string {
  const script = `
    const { buildApp, listen, parseConfig } = await import(${JSON.stringify(CORE)});
    const config = parseConfig({
      server: { host: '127.0.0.1', port: 0, heap_growth_percent: ${percent} },
      database: { url: 'sqlite::memory:' },
      log: { level: 'silent' },
      secrets: { encryption_key: ${JSON.stringify(KEY)} },
      plugins: [],
    }, {});
    const gatehouse = await buildApp(config);
    console.log('--- listen');
    const running = await listen(gatehouse);
    console.log('--- listening');
    await running.shutdown();
  `;
  const out = execFileSync(process.execPath, ['--trace-gc', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  return out.slice(out.indexOf('--- listen\n'), out.indexOf('--- listening'));
}

describe('heap growth cap at start (decisions 55 and 60)', () => {
  it('listen runs the collection once with heap_growth_percent set, and not with 0', () => {
    expect(traceListen(50).match(/Mark-Compact.*testing/g)).to.have.length(1);
    expect(traceListen(0)).to.not.match(/Mark-Compact.*testing/);
  });

  it('runs one full collection when it sets the cap, so V8 computes the next limit with it', () => {
    const trace = traceAfterCap(50);
    const marks = trace.split('\n').filter((line) => /Mark-Compact.*testing/.test(line));
    expect(marks).to.have.length(1);
    expect(trace.indexOf(marks[0]!)).to.be.lessThan(trace.indexOf('--- after'));
  });

  it('leaves gc off the global and --expose-gc off for contexts made later', () => {
    expect(traceAfterCap(50)).to.contain('--- after undefined undefined');
  });

  it('does nothing with 0 (V8 keeps its own heuristics)', () => {
    const trace = traceAfterCap(0);
    expect(trace).to.not.match(/Mark-Compact.*testing/);
    expect(trace).to.contain('--- after undefined undefined');
  });
});
