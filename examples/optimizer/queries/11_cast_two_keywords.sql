-- Titles with two of the popular keywords, and their cast.
SELECT count(*)
FROM title t
JOIN movie_keyword mk1 ON mk1.movie_id = t.id
JOIN movie_keyword mk2 ON mk2.movie_id = t.id
JOIN cast_info ci ON ci.movie_id = t.id
WHERE mk1.keyword_id = 1 AND mk2.keyword_id = 2 AND ci.role = 'actor';
