//! Test harness: one throwaway cluster per test binary, a fresh database per test (to be written).
