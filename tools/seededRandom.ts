/**
 * The one seeded random generator of the tools and tests: mulberry32, tiny, fast and well distributed. The same
 * seed gives the same sequence on every run and machine, so sample orders, fault plans and probability faults
 * can be replayed from a seed.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
