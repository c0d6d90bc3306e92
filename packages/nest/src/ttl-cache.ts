// A small cache of data (never of a decision) with a lifetime per entry. Values are promises, so
// concurrent requests for one key share one call to the service; a failed call is not kept.
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: Promise<V>; expires: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly max = 10_000,
  ) {}

  get(key: string, load: () => Promise<V>): Promise<V> {
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && hit.expires > now) return hit.value;
    if (hit) this.entries.delete(key);
    const value = load();
    if (this.ttlMs > 0) {
      // The oldest entry goes first when full.
      if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string);
      this.entries.set(key, { value, expires: now + this.ttlMs });
      value.catch(() => {
        if (this.entries.get(key)?.value === value) this.entries.delete(key);
      });
    }
    return value;
  }

  clear(): void {
    this.entries.clear();
  }
}
