\set x !not(TRUE)
