\set x café + 1
