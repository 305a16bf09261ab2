\set x random_gaussian(1, 2)
