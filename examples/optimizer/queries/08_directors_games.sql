-- Directors of video games after 1995 (all are) with their companies.
SELECT min(c.name), count(*)
FROM title t
JOIN kind_type kt ON kt.id = t.kind_id
JOIN cast_info ci ON ci.movie_id = t.id
JOIN movie_companies mc ON mc.movie_id = t.id
JOIN company c ON c.id = mc.company_id
WHERE kt.kind = 'video game' AND t.production_year > 1995 AND ci.role = 'director';
