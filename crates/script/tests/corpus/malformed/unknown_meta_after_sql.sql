SELECT 1;
\quit
