/**
 * Records keyed by what agents send (session ids, agent names, call identities), without a
 * prototype: `__proto__` or `constructor` is a key like any other (an agent named `__proto__` made
 * every batch that loaded its sessions throw), and new keys make V8 no hidden classes — each new
 * unique string as a key of an object literal made a hidden class and a transition, which was the
 * costliest line of the behaviour engine. Pure.
 */
export function dictionary<T>(from?: Readonly<Record<string, T>> | null): Record<string, T> {
  return Object.assign(Object.create(null) as Record<string, T>, from);
}

/** A copy of `from` with `key` set to `value`. */
export function dictionaryWith<T>(from: Readonly<Record<string, T>> | null, key: string, value: T): Record<string, T> {
  const out = dictionary(from);
  out[key] = value;
  return out;
}
