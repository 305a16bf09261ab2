\set x 1;
