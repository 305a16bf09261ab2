\set x 1
\gset
