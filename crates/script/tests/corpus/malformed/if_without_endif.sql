\if TRUE
\set x 1
