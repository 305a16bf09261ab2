\if TRUE
\set x 1 +
\endif
