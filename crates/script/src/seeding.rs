//! The order in which pgbench derives every PRNG state from the base seed (reference §8.2), so a
//! run with `--random-seed=N` replays pgbench's random values exactly.
//!
//! From the base state (seeded with N): one state per client (client order), then the shared
//! `:default_seed` value (only drawn when `-D default_seed=...` did not define it), then for each
//! thread its "choose" (script selection), "throttle" (`-R` schedule) and "sample"
//! (`--sampling-rate`) states. Each derived state is `Prng::seed(base.next_u64())`.

use crate::prng::Prng;

/// Every PRNG state of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeedStates {
    /// `--random-seed` value, also the `:random_seed` variable (as int64).
    pub random_seed: u64,
    /// One state per client, used by the expression random functions.
    pub clients: Vec<Prng>,
    /// The `:default_seed` value (`None` when it was defined by `-D` and so not drawn).
    pub default_seed: Option<i64>,
    /// One entry per thread (after clamping `-j` to `-c`).
    pub threads: Vec<ThreadSeeds>,
}

/// A thread's own states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadSeeds {
    pub choose: Prng,
    pub throttle: Prng,
    pub sample: Prng,
}

/// The states pgbench derives from `base_seed` when `:default_seed` is not user-defined.
pub fn seed_states(base_seed: u64, nclients: usize, nthreads: usize) -> SeedStates {
    seed_states_with(base_seed, nclients, nthreads, false)
}

/// Same as [`seed_states`]; `default_seed_defined` (by `-D`) skips the `:default_seed` draw, which
/// shifts the thread states exactly as in pgbench.
pub fn seed_states_with(
    base_seed: u64,
    nclients: usize,
    nthreads: usize,
    default_seed_defined: bool,
) -> SeedStates {
    let mut base = Prng::seed(base_seed);
    let clients = (0..nclients).map(|_| Prng::seed(base.next_u64())).collect();
    let default_seed = if default_seed_defined {
        None
    } else {
        Some(base.next_u64() as i64)
    };
    let threads = (0..nthreads)
        .map(|_| ThreadSeeds {
            choose: Prng::seed(base.next_u64()),
            throttle: Prng::seed(base.next_u64()),
            sample: Prng::seed(base.next_u64()),
        })
        .collect();
    SeedStates {
        random_seed: base_seed,
        clients,
        default_seed,
        threads,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_seed_for_5432_matches_pgbench() {
        // pgbench 15.18 -c 1 --random-seed=5432: debug(:default_seed) = 7590783070443337668
        let s = seed_states(5432, 1, 1);
        assert_eq!(s.default_seed, Some(7590783070443337668));
        assert_eq!(s.random_seed, 5432);
    }

    #[test]
    fn client_zero_state_comes_first() {
        let s = seed_states(5432, 3, 2);
        let mut base = Prng::seed(5432);
        assert_eq!(s.clients[0], Prng::seed(base.next_u64()));
        assert_eq!(s.clients.len(), 3);
        assert_eq!(s.threads.len(), 2);
    }

    #[test]
    fn defined_default_seed_shifts_thread_states() {
        let a = seed_states_with(1, 2, 1, false);
        let b = seed_states_with(1, 2, 1, true);
        assert_eq!(a.clients, b.clients);
        assert_eq!(b.default_seed, None);
        assert_ne!(a.threads[0].choose, b.threads[0].choose);
        assert_eq!(
            b.threads[0].choose,
            Prng::seed(a.default_seed.unwrap() as u64)
        );
    }
}
