//! Typed values of the expression language (NULL, boolean, int64, double) and their coercions,
//! with pgbench's rules and error messages.

/// A typed value. Strings never appear here: string variables are converted lazily by [`crate::vars`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Double(f64),
}
