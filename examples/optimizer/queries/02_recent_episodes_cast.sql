-- Episodes after 2005 (all of them are) with their voice cast.
SELECT min(p.name), count(*)
FROM title t
JOIN cast_info ci ON ci.movie_id = t.id
JOIN person p ON p.id = ci.person_id
WHERE t.kind_id = 3 AND t.production_year >= 2005 AND ci.note = '(voice)';
