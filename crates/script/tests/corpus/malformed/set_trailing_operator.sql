\set i 1 +
