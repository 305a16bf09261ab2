-- Old shorts about murder and who was in them.
SELECT min(p.name), count(*)
FROM title t
JOIN movie_keyword mk ON mk.movie_id = t.id
JOIN keyword k ON k.id = mk.keyword_id
JOIN cast_info ci ON ci.movie_id = t.id
JOIN person p ON p.id = ci.person_id
WHERE t.kind_id = 5 AND t.production_year < 1960 AND k.keyword = 'murder';
