import { execFileSync } from 'node:child_process';
import { expect } from 'chai';

const MODULE = new URL('../../core/dist/heap-growth.js', import.meta.url).href;

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

describe('heap growth cap at start (decisions 55 and 60)', () => {
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
