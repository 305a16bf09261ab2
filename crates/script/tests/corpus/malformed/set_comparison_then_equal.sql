\set x 1 < 2 = TRUE
