\set	x	1 +	
