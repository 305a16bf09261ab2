\set x random(1)
