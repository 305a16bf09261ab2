-- Kind by name (one row of kind_type) with the correlated year, keyword and company.
SELECT min(t.title), count(*)
FROM kind_type kt
JOIN title t ON t.kind_id = kt.id
JOIN movie_keyword mk ON mk.movie_id = t.id
JOIN movie_companies mc ON mc.movie_id = t.id
JOIN company c ON c.id = mc.company_id
WHERE kt.kind = 'tv series' AND mk.keyword_id = 1 AND c.country_code = '[jp]'
  AND t.production_year BETWEEN 1990 AND 2022;
