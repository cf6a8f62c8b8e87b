import { expect } from 'chai';
import { flowClosedReason, type LoginFlow } from '../../core/dist/verification/flows.js';

describe('login flows: when one takes no more steps', function () {
  const now = new Date('2026-11-25T00:00:00Z');
  const flow = (status: LoginFlow['status'], expiresInSeconds: number): LoginFlow => ({
    id: 'f',
    clientId: 'app',
    userId: 'u',
    stage: 0,
    stages: [['PASSWORD']],
    amr: [],
    methods: [],
    completions: [],
    status,
    authTime: null,
    params: {},
    expiresAt: new Date(now.getTime() + expiresInSeconds * 1000),
  });

  it('a live flow: active and not expired', function () {
    expect(flowClosedReason(flow('active', 60), now)).to.equal(null);
  });

  it('completed, or finished (the app got its answer): REQUEST_COMPLETED, even past its expiry', function () {
    expect(flowClosedReason(flow('completed', 60), now)).to.equal('REQUEST_COMPLETED');
    expect(flowClosedReason(flow('finished', 60), now)).to.equal('REQUEST_COMPLETED');
    expect(flowClosedReason(flow('finished', -60), now)).to.equal('REQUEST_COMPLETED');
  });

  it('expired (its last instant included) or cancelled: REQUEST_EXPIRED', function () {
    expect(flowClosedReason(flow('active', 0), now)).to.equal('REQUEST_EXPIRED');
    expect(flowClosedReason(flow('active', -1), now)).to.equal('REQUEST_EXPIRED');
    expect(flowClosedReason(flow('cancelled', 60), now)).to.equal('REQUEST_EXPIRED');
  });
});
