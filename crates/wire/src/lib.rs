//! Lean PostgreSQL wire driver (to be written).
