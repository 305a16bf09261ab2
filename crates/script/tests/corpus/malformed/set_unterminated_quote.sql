\set x 1 + 'q
