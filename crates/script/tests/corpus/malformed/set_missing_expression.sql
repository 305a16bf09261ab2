\set x
