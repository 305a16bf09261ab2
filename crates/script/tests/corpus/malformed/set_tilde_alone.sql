\set x ~
