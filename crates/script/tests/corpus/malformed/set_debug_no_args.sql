\set x debug()
