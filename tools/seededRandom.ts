/**
 * The one seeded random generator of the tools and tests: the devhost's mulberry32 (the one its latency profiles
 * draw from), tiny, fast and well distributed. The same seed gives the same sequence on every run and machine, so
 * sample orders, fault plans and probability faults can be replayed from a seed.
 */
export { mulberry32 as seededRandom } from "devhost";
