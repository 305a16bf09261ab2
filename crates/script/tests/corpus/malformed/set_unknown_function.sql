\set x nosuch(1)
