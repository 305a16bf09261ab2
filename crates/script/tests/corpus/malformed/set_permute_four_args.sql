\set x permute(1, 2, 3, 4)
