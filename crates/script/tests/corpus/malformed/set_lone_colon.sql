\set x : + 1
