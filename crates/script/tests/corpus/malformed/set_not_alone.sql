\set x NOT
