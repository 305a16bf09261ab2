//! Throwaway PostgreSQL clusters and everything around runs (to be written).
