\set x 1
\endif
