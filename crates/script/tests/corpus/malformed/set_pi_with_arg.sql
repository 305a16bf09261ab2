\set x pi(1)
