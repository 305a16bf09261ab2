SELECT 1 \set x 1 +
