import { expect } from 'chai';
import { deadEndStage, offered, remainingStages } from '../../core/dist/verification/stages.js';

describe('login stages: each stage by a method of its own', function () {
  const demoApp = [['PASSWORD'], ['TOTP', 'SMS', 'BACKUPCODE']];

  it('offered: a stage without the methods already used', function () {
    expect(offered(['PASSWORD', 'TOTP'], ['PASSWORD'])).to.deep.equal(['TOTP']);
    expect(offered(['PASSWORD'], [])).to.deep.equal(['PASSWORD']);
  });

  it('remainingStages: what a set of completed methods leaves to do', function () {
    expect(remainingStages(demoApp, [])).to.deep.equal(demoApp);
    expect(remainingStages(demoApp, ['PASSWORD'])).to.deep.equal([['TOTP', 'SMS', 'BACKUPCODE']]);
    expect(remainingStages(demoApp, ['PASSWORD', 'SMS'])).to.deep.equal([]);
    expect(remainingStages(demoApp, ['TOTP'])).to.deep.equal([['PASSWORD']]);
    expect(remainingStages([['PASSWORD']], ['PASSWORD', 'TOTP'])).to.deep.equal([]);
  });

  it('remainingStages: one method never meets two stages', function () {
    const shared = [
      ['EMAIL', 'SMS', 'PASSWORD'],
      ['TOTP', 'BACKUPCODE', 'PASSWORD'],
    ];
    expect(remainingStages(shared, ['PASSWORD'])).to.deep.equal([['TOTP', 'BACKUPCODE', 'PASSWORD']]);
    expect(remainingStages(shared, ['PASSWORD', 'TOTP'])).to.deep.equal([]);
  });

  it('remainingStages: picks the stages to cover so that what is left can still be done', function () {
    // Covering stage 0 with A would leave stage 1 = [A] with nothing new; cover stage 1 instead.
    expect(remainingStages([['A', 'B'], ['A']], ['A'])).to.deep.equal([['A', 'B']]);
    // Nothing to gain and nothing possible: null.
    expect(remainingStages([['A'], ['A']], ['A'])).to.equal(null);
  });

  it('deadEndStage: a stage some order of choices leaves empty', function () {
    expect(deadEndStage(demoApp)).to.equal(null);
    expect(deadEndStage([['PASSWORD'], ['PASSWORD']])).to.deep.equal({ stage: 1, after: ['PASSWORD'] });
    expect(deadEndStage([['PASSWORD', 'TOTP'], ['TOTP']])).to.deep.equal({ stage: 1, after: ['TOTP'] });
    expect(
      deadEndStage([
        ['A', 'B'],
        ['A', 'B'],
        ['A', 'B'],
      ]),
    ).to.deep.equal({ stage: 2, after: ['A', 'B'] });
    expect(deadEndStage([])).to.equal(null);
  });
});
