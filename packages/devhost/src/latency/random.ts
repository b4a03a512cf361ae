// The seeded randomness of a latency profile: mulberry32, a small 32-bit generator, with one independent stream
// per name (a hop, a queue's back-off, a function group's cold start). A stream's draws depend only on the seed and
// its name, so the delays of one hop replay the same whatever the other hops did in between.

/** A closed range of milliseconds: [min, max]. */
export type Range = readonly [min: number, max: number];

/** mulberry32: a generator of floats in [0, 1) from a 32-bit seed. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** FNV-1a over the UTF-8 bytes of `text`: a stable 32-bit hash. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, "utf8")) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

export interface Rng {
  /** A float in [0, 1). */
  next(): number;
  /** A whole number of milliseconds in [min, max]. */
  between(range: Range): number;
  /** A float in [low, high). */
  uniform(low: number, high: number): number;
}

function rng(next: () => number): Rng {
  return {
    next,
    between: ([min, max]) => min + Math.floor(next() * (max - min + 1)),
    uniform: (low, high) => low + next() * (high - low),
  };
}

/** The largest seed: seeds are unsigned 32-bit integers. */
export const MAX_SEED = 0xffff_ffff;

/** Named, independent streams of one seed. */
export class RandomStreams {
  readonly #streams = new Map<string, Rng>();

  constructor(readonly seed: number) {}

  stream(name: string): Rng {
    let stream = this.#streams.get(name);
    if (!stream) {
      stream = rng(mulberry32((Math.imul(this.seed >>> 0, 0x9e3779b1) ^ fnv1a32(name)) >>> 0));
      this.#streams.set(name, stream);
    }
    return stream;
  }
}
