\set x 1 + \
