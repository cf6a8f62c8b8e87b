import { BootError } from '../errors.js';

/** One kind of extension (methods, grants, ...). Ids are unique: nothing is "last one wins". */
export class Registry<T> {
  private readonly items = new Map<string, { item: T; owner: string }>();

  constructor(
    readonly kind: string,
    private readonly idOf: (item: T) => string,
    /** What the item lacks (required functions, fields); empty when it is whole. */
    private readonly problemsOf: (item: Record<string, unknown>) => string[] = () => [],
  ) {}

  /** Adds `owner`'s item; answers its id. */
  add(item: T, owner: string): string {
    const id = item && typeof item === 'object' ? this.idOf(item) : undefined;
    if (typeof id !== 'string' || id === '') {
      throw new BootError('PLUGIN_INVALID', `plugin ${owner}: a ${this.kind} without an id`);
    }
    const problems = this.problemsOf(item as Record<string, unknown>);
    if (problems.length) {
      throw new BootError('PLUGIN_INVALID', `plugin ${owner}: ${this.kind} "${id}" ${problems.join(', ')}`);
    }
    const existing = this.items.get(id);
    if (existing) {
      throw new BootError(
        'PLUGIN_DUPLICATE_ID',
        `plugin ${owner}: ${this.kind} "${id}" is already registered by plugin ${existing.owner}`,
      );
    }
    this.items.set(id, { item, owner });
    return id;
  }

  get(id: string): T | undefined {
    return this.items.get(id)?.item;
  }

  has(id: string): boolean {
    return this.items.has(id);
  }

  ownerOf(id: string): string | undefined {
    return this.items.get(id)?.owner;
  }

  ids(): string[] {
    return [...this.items.keys()];
  }

  values(): T[] {
    return [...this.items.values()].map((entry) => entry.item);
  }
}
