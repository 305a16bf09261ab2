\set x 1.5.5
