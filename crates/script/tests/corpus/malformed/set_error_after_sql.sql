-- comment
SELECT 1;

SELECT 2
  FROM (SELECT 3) s;
\set ok 1
\set bad 1 * * 2
