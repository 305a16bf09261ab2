//! pg_prng (xoroshiro128** seeded through splitmix64), bit-exact with PostgreSQL 15+.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prng {
    pub s0: u64,
    pub s1: u64,
}
