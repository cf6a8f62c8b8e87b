import type { CredentialStore } from '@gatehouse-auth/plugin-api';

/**
 * A user's credentials of one method for the span of one request: `list` reads are shared
 * (the pipeline's "is it set up?" and the method's check read the same rows), and any write
 * through it forgets them.
 */
export function readOnce(store: CredentialStore): CredentialStore {
  const lists = new Map<string, ReturnType<CredentialStore['list']>>();
  const writing =
    <A extends unknown[], R>(write: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      lists.clear();
      return write(...args);
    };
  return {
    list: (type) => {
      const key = type ?? '';
      let listed = lists.get(key);
      if (!listed) {
        listed = store.list(type);
        lists.set(key, listed);
        // A failed read is not kept.
        listed.catch(() => lists.delete(key));
      }
      return listed;
    },
    get: (id) => store.get(id),
    add: writing((c) => store.add(c)),
    replaceAll: writing((type, list) => store.replaceAll(type, list)),
    remove: writing((id) => store.remove(id)),
    markUsed: writing((id) => store.markUsed(id)),
    advanceCounter: writing((id, value) => store.advanceCounter(id, value)),
    update: writing((id, changes) => store.update(id, changes)),
  };
}
