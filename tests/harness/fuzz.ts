// Seeded fuzzing for node:test: the seed comes from FUZZ_SEED (else the file's fixed default) and the
// iteration count from FUZZ_ITERATIONS; a failing case prints the seed so the run can be replayed.
import test from 'node:test';
import { SeededRandom } from '../../src/util/prng.js';

export interface Fuzz {
  readonly seed: number;
  readonly iterations: number;
  /** A test that runs `body` with a PRNG seeded by `seed`. */
  case(name: string, body: (rnd: SeededRandom) => void): void;
}

export function fuzz(defaultSeed: number, defaultIterations: number): Fuzz {
  const seed = Number(process.env['FUZZ_SEED'] ?? defaultSeed);
  const iterations = Number(process.env['FUZZ_ITERATIONS'] ?? defaultIterations);
  return {
    seed,
    iterations,
    case(name, body) {
      test(`${name} (seed=${seed})`, () => {
        try {
          body(new SeededRandom(seed));
        } catch (e) {
          console.error(`FUZZ FAILURE in "${name}": rerun with FUZZ_SEED=${seed}`);
          throw e;
        }
      });
    },
  };
}
