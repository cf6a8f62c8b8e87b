import type { ServerChild } from './children.js';

interface Minted {
  type: 'minted';
  codes?: string[];
  error?: string;
  elapsedMs?: number;
}

/**
 * Authorization codes of the peer, minted in its process over IPC in small batches just ahead
 * of use: node-oidc-provider's default in-memory adapter is an LRU of 1,000 entries (a code and
 * its grant are two), so codes minted all up front would be evicted before they are redeemed.
 */
export class PeerCodeSupply {
  private readonly queue: string[] = [];
  private pending = false;
  /** Codes handed out when none was ready (those requests fail, and are counted as failures). */
  misses = 0;
  minted = 0;
  /** Time the peer spent minting, in its own process (it competes with the timed requests). */
  mintMs = 0;
  error: string | null = null;

  constructor(
    private readonly peer: ServerChild,
    private readonly codeChallenge: string,
    private readonly batch = 100,
    private readonly low = 100,
  ) {
    peer.process.on('message', this.onMessage);
  }

  private readonly onMessage = (message: Minted) => {
    if (message?.type !== 'minted') return;
    this.pending = false;
    if (message.codes) {
      this.queue.push(...message.codes);
      this.minted += message.codes.length;
      this.mintMs += message.elapsedMs ?? 0;
    } else this.error = message.error ?? 'minting failed';
    this.refill();
  };

  private refill(): void {
    if (this.pending || this.error || this.queue.length >= this.low || !this.peer.process.connected) return;
    this.pending = true;
    this.peer.process.send({
      type: 'mint',
      count: this.batch,
      codeChallenge: this.codeChallenge,
      accountId: 'bench-user',
    });
  }

  /** Waits until the first batch is there (bounded). */
  async prime(timeoutMs = 10_000): Promise<void> {
    this.refill();
    const deadline = Date.now() + timeoutMs;
    while (this.queue.length < this.low && !this.error) {
      if (Date.now() > deadline) throw new Error('the peer did not mint codes in time');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    if (this.error) throw new Error(this.error);
  }

  next = (): string => {
    const code = this.queue.shift();
    this.refill();
    if (code) return code;
    this.misses += 1;
    return 'none-ready';
  };

  close(): void {
    this.peer.process.off('message', this.onMessage);
  }
}
