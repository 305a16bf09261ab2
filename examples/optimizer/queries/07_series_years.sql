-- Series and episodes (series_years is set exactly for them) from Japanese companies.
SELECT t.kind_id, count(*)
FROM title t
JOIN movie_companies mc ON mc.movie_id = t.id
JOIN company c ON c.id = mc.company_id
WHERE t.series_years IS NOT NULL AND t.kind_id IN (2, 3) AND t.production_year > 1995
  AND c.country_code = '[jp]'
GROUP BY t.kind_id;
