/**
 * Authorization codes for scenario e, minted by each server in its own process through its own
 * models (bench-only, over IPC, never over HTTP): Gatehouse with `TokenService.createCode`, the
 * peer with its `Grant` and `AuthorizationCode` models. Minting happens before each timed run and
 * is not timed.
 */
import type { ServerChild } from './children.js';

/** Asks a server for `count` codes of CODE_CLIENT, all with one PKCE challenge. */
export interface MintRequest {
  type: 'mint';
  count: number;
  codeChallenge: string;
  /** The user the codes are for (a Gatehouse user id; any account id on the peer). */
  subject: string;
}

export interface MintReply {
  type: 'minted';
  codes?: string[];
  error?: string;
  elapsedMs?: number;
}

/** Codes minted at once in one event-loop turn (so Gatehouse's group commit takes them together). */
export const MINT_CHUNK = 500;

export function mintCodes(
  server: ServerChild,
  request: Omit<MintRequest, 'type'>,
  timeoutMs = 120_000,
): Promise<{ codes: string[]; elapsedMs: number }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => done(new Error(`${server.name}: minting ${request.count} codes timed out`)),
      timeoutMs,
    );
    const onMessage = (message: MintReply) => {
      if (message?.type !== 'minted') return;
      if (message.codes) done(null, { codes: message.codes, elapsedMs: message.elapsedMs ?? 0 });
      else done(new Error(`${server.name}: ${message.error ?? 'minting failed'}`));
    };
    const done = (err: Error | null, value?: { codes: string[]; elapsedMs: number }) => {
      clearTimeout(timer);
      server.process.off('message', onMessage);
      if (err) reject(err);
      else resolve(value!);
    };
    server.process.on('message', onMessage);
    server.process.send({ type: 'mint', ...request } satisfies MintRequest);
  });
}

/**
 * Runs `mintOne` `count` times, MINT_CHUNK at a time, then `settle` (work the mint leaves behind
 * that would otherwise fall into the timed run), and replies over IPC.
 */
export async function answerMint(
  count: number,
  mintOne: () => Promise<string>,
  settle: () => void | Promise<void> = () => undefined,
): Promise<void> {
  const started = process.hrtime.bigint();
  try {
    const codes: string[] = [];
    while (codes.length < count) {
      const n = Math.min(MINT_CHUNK, count - codes.length);
      codes.push(...(await Promise.all(Array.from({ length: n }, mintOne))));
    }
    await settle();
    const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
    process.send!({ type: 'minted', codes, elapsedMs } satisfies MintReply);
  } catch (err) {
    process.send!({ type: 'minted', error: String(err) } satisfies MintReply);
  }
}
