\set x 'a'
