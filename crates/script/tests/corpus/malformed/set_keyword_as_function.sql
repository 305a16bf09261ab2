\set x and(1)
